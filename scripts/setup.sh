#!/usr/bin/env bash
# Installs everything Gatehouse needs on a fresh Debian/Ubuntu machine, only what is missing:
#   - Debian packages: runsc (gVisor), build tools for the native npm modules (better-sqlite3, isolated-vm),
#     openssh (the git gatekeeper tests run a real sshd on loopback), nats-server (live notices),
#     chromium (the approver web app's browser tests, driven by playwright-core)
#   - the Temporal CLI (its dev server), built with `go install` when missing
#   - the Python MCP SDK (PyPI mcp) in a venv under ${XDG_CACHE_HOME:-~/.cache}/gatehouse/python-mcp, outside
#     the checkout: the CLI's tests drive the gateway's MCP endpoint with its client
#   - the local Kubernetes cluster's binaries in ${GATEHOUSE_CACHE_DIR:-~/.cache/gatehouse}/cluster/bin
#     (deploy/cluster/build.sh, docs/cluster.md)
#   - promtool in ${GATEHOUSE_CACHE_DIR:-~/.cache/gatehouse}/promtool/bin (scripts/build-promtool.sh), for the
#     chart's alert and dashboard tests
#   - Jaeger in ${GATEHOUSE_CACHE_DIR:-~/.cache/gatehouse}/jaeger (scripts/build-jaeger.sh): the tracing tests' OTLP receiver
#   - npm packages (npm ci, skipped when node_modules already matches package-lock.json), then builds
#     the generated code (proto → TypeScript, the sandbox bundle) and the web app (turbo: cached builds are
#     restored, not redone).
# Safe to run again; it skips what is already there: with nothing missing it takes a few seconds, so
# `npm test` and `npm run demo` run it first (with --quiet: no build logs, no "Next:" hint).
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1

quiet=""
case "${1:-}" in
  "") ;;
  --quiet) quiet=1 ;;
  *) echo "setup: unknown option $1 (the only option is --quiet)" >&2; exit 2 ;;
esac

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
command -v runsc >/dev/null 2>&1 || missing+=(runsc)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
# venv + ensurepip (Debian splits them out): the Python MCP SDK's venv below.
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
command -v git >/dev/null 2>&1 || missing+=(git)
# sshd and ssh: the git gatekeeper's ssh remote tests run a real sshd on loopback.
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
# nats-server: live notices in split mode and the gateway/web tests; chromium: the web app's browser tests.
command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# setpriv (util-linux): gatehouse dev's children die with it; ss (iproute2): a busy port's error names its pid.
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
command -v ss >/dev/null 2>&1 || missing+=(iproute2)
# jq: deploy/cluster/image.sh names an image in its OCI index.
command -v jq >/dev/null 2>&1 || missing+=(jq)
# postgresql: the PostgreSQL event-store backend's tests start a real server on loopback.
compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || missing+=(postgresql)
if [ "${#missing[@]}" -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
  else
    echo "setup: missing ${missing[*]} and no apt-get here; install them by hand" >&2
    [ " ${missing[*]} " = " runsc " ] || exit 1
  fi
fi
if ! command -v runsc >/dev/null 2>&1; then
  echo "setup: WARNING runsc (gVisor) is not installed: sandboxes will run with --insecure-no-gvisor only" >&2
fi

# The Temporal CLI (dev server for `gatehouse dev` and the tests), built from the Go module proxy
# when missing (no binary download needed). Skipped when TEMPORAL_ADDRESS points at a cluster.
TEMPORAL_CLI_VERSION=v1.5.1
if [ -z "${TEMPORAL_ADDRESS:-}" ] && ! command -v temporal >/dev/null 2>&1 && [ ! -x "${GOBIN:-$HOME/go/bin}/temporal" ]; then
  if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH="$PATH:/usr/local/go/bin"; fi
  if ! command -v go >/dev/null 2>&1; then
    echo "setup: the Temporal CLI is missing and Go is not installed to build it; install Go, or set TEMPORAL_ADDRESS" >&2
    exit 1
  fi
  echo "setup: building the Temporal CLI $TEMPORAL_CLI_VERSION with go install (a few minutes)"
  if [ "$(id -u)" -eq 0 ]; then export GOBIN=/usr/local/bin; fi
  go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
fi

# The Python MCP SDK, a client we did not write, for the MCP endpoint tests (e2e/mcp/mcp-clients.test.ts).
# Made once; the marker file names the version, so a half-made or older venv is made again.
PYTHON_MCP_VERSION=2.3.0
python_mcp="${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse/python-mcp"
if [ ! -f "$python_mcp/.installed-mcp-$PYTHON_MCP_VERSION" ]; then
  echo "setup: installing the Python MCP SDK (mcp $PYTHON_MCP_VERSION) into $python_mcp"
  rm -rf "$python_mcp"
  python3 -m venv "$python_mcp"
  "$python_mcp/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$PYTHON_MCP_VERSION"
  touch "$python_mcp/.installed-mcp-$PYTHON_MCP_VERSION"
fi
# aiosmtpd, a real SMTP server for the notification tests (packages/notify/test), in the same venv; its own
# marker so a venv made before it was added gets it too.
AIOSMTPD_VERSION=1.4.6
if [ ! -f "$python_mcp/.installed-aiosmtpd-$AIOSMTPD_VERSION" ]; then
  echo "setup: installing aiosmtpd $AIOSMTPD_VERSION into $python_mcp"
  "$python_mcp/bin/python" -m pip install --quiet --disable-pip-version-check "aiosmtpd==$AIOSMTPD_VERSION"
  touch "$python_mcp/.installed-aiosmtpd-$AIOSMTPD_VERSION"
fi

# The local Kubernetes cluster's binaries (docs/cluster.md: Kubernetes, etcd, containerd, gVisor's shim,
# CoreDNS, helm, umoci, runc and the CNI plugins), built from the Go module proxy and Debian packages into
# ${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/gatehouse}/cluster/bin only when missing: the chart's
# tests run on that cluster. GATEHOUSE_SKIP_CLUSTER_BUILD=1 skips it (then those tests build on first use).
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH="$PATH:/usr/local/go/bin"; fi
if [ -z "${GATEHOUSE_SKIP_CLUSTER_BUILD:-}" ] && ! bash deploy/cluster/build.sh --check; then
  echo "setup: building the local Kubernetes cluster's binaries (about 30 minutes the first time on 2 idle cores, over an hour on a busy machine; cached after)"
  bash deploy/cluster/build.sh
fi

# promtool (Prometheus's rule checker and rule unit-test runner), built from the Go module proxy into
# ${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/gatehouse}/promtool only when missing: the chart's
# monitoring tests (deploy/test/promtool.test.ts) check the PrometheusRule and the dashboard's queries with it.
if ! bash scripts/build-promtool.sh --check; then
  bash scripts/build-promtool.sh
fi

# Jaeger (an OTLP receiver with a query API), built from the Go module proxy into
# ${GATEHOUSE_CACHE_DIR:-~/.cache/gatehouse}/jaeger only when missing: the tracing tests export to it and
# read the traces back (docs/observability.md). About 8 minutes cold on 2 idle cores (15 on a busy machine).
if ! bash scripts/build-jaeger.sh --check; then
  echo "setup: building Jaeger for the tracing tests (scripts/build-jaeger.sh; several minutes the first time, cached after)"
  bash scripts/build-jaeger.sh
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "setup: Node.js 20 or newer is required (found $(node -v))" >&2
  exit 1
fi

if [ ! -f package-lock.json ]; then
  npm install --no-audit --no-fund
elif why=$(node scripts/npm-installed.mjs); then
  [ -n "$quiet" ] || echo "setup: node_modules matches package-lock.json; npm ci skipped"
else
  echo "setup: installing npm packages with npm ci ($why)"
  npm ci --no-audit --no-fund
fi
if [ -n "$quiet" ]; then
  npx turbo run build --output-logs=errors-only
else
  echo "setup: building the generated code (buf generate: proto → TypeScript), the sandbox bundle, the compiled CLI and the web app (turbo restores cached builds)"
  npx turbo run build
  echo "setup: done. Next: npm run demo   (tests: npm test)"
fi
