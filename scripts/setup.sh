#!/usr/bin/env bash
# Installs what Gatehouse needs on a Debian/Ubuntu machine, only what is missing, for one need:
#   --for demo     what `npm run demo` uses: Debian packages (runsc (gVisor), git, the build tools of the
#                  native npm modules: make, g++, python3; setpriv, ss), the Temporal CLI (its dev server,
#                  built with `go install`), npm packages (npm ci) and the build (turbo)
#   --for test     (the default, what `npm test` runs) the demo's, plus: Debian packages the tests use
#                  (sshd/ssh, nats-server, chromium, jq, PostgreSQL, python3-venv), the Python MCP SDK and
#                  aiosmtpd in a venv under ${XDG_CACHE_HOME:-~/.cache}/gatehouse/python-mcp, the local
#                  Kubernetes cluster's binaries (deploy/cluster/build.sh), promtool, Jaeger and the
#                  Prometheus Operator's CRDs (scripts/build-*.sh)
#   --for cluster  what `npm run cluster` uses: jq, curl, util-linux, iproute2 and the cluster's binaries
# Every Go build shares one Go cache (scripts/go-cache.sh). The Go builds run in the background (two
# chains: the cluster's binaries; the other Go builds) while `npm ci` and the build run; a failed step is
# named with the end of its log.
# Each step that has work to do prints "setup: <step> …" and "setup: <step> … done in N s" (a long one
# also "… still running (N s)" every 60 s); a step with nothing to do prints nothing with --quiet.
# Usage: setup.sh [--for demo|test|cluster] [--quiet] [--plan]
#   --quiet  no build logs, no "skipped" lines, no "Next:" hint (npm test and npm run demo use it)
#   --plan   runs nothing: prints each step of the need as "<step> <todo|present> <cold minutes>", then
#            "total-todo-minutes N" (the sum of the cold estimates of the steps still to do)
# With nothing missing it takes a few seconds. GATEHOUSE_SKIP_CLUSTER_BUILD=1 leaves the cluster's
# binaries out (the chart's tests then build them on first use).
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1

usage="setup: usage: setup.sh [--for demo|test|cluster] [--quiet] [--plan]"
need=test quiet="" plan=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --quiet) quiet=1 ;;
    --plan) plan=1 ;;
    --for=*) need="${1#--for=}" ;;
    --for)
      [ "$#" -ge 2 ] || { echo "setup: --for needs a value: demo, test or cluster" >&2; exit 2; }
      need="$2"; shift ;;
    *) echo "setup: unknown option $1 (options: --for demo|test|cluster, --quiet, --plan)" >&2; echo "$usage" >&2; exit 2 ;;
  esac
  shift
done
case "$need" in
  demo | test | cluster) ;;
  *) echo "setup: --for takes demo, test or cluster (got \"$need\")" >&2; exit 2 ;;
esac

# shellcheck source=go-cache.sh
. scripts/go-cache.sh
LOGS="$GATEHOUSE_CACHE/setup-logs"
TEMPORAL_CLI_VERSION=v1.5.1
PYTHON_MCP_VERSION=2.3.0
AIOSMTPD_VERSION=1.4.6
python_mcp="${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse/python-mcp"

# The steps of each need, in order. Cold minutes: measured on a fresh 2-core machine at load 4–8 (README).
steps_demo=(debian-packages temporal-cli npm-packages build)
steps_test=(debian-packages temporal-cli python-mcp cluster-binaries promtool jaeger monitoring-crds npm-packages build)
steps_cluster=(debian-packages cluster-binaries)
cold_minutes() {
  case "$1" in
    debian-packages) echo 1 ;; temporal-cli) echo 3 ;; python-mcp) echo 1 ;; cluster-binaries) echo 23 ;;
    promtool) echo 3 ;; jaeger) echo 5 ;; monitoring-crds) echo 2 ;; npm-packages) echo 3 ;; build) echo 2 ;;
  esac
}
label() {
  case "$1" in
    debian-packages) echo "Debian packages" ;; temporal-cli) echo "the Temporal CLI" ;;
    python-mcp) echo "the Python MCP SDK" ;; cluster-binaries) echo "the local cluster's binaries" ;;
    promtool) echo "promtool" ;; jaeger) echo "Jaeger" ;; monitoring-crds) echo "the monitoring CRDs" ;;
    npm-packages) echo "npm packages" ;; build) echo "the build" ;;
  esac
}
# The Go builds: run in the background, one after another (each uses both cores: go build -p 2).
is_go_step() { case "$1" in temporal-cli | cluster-binaries | promtool | jaeger | monitoring-crds) true ;; *) false ;; esac; }

# Debian packages of a need (command checks first: a machine may have them from elsewhere).
debian_missing() {
  local m=()
  if [ "$1" != cluster ]; then
    command -v runsc >/dev/null 2>&1 || m+=(runsc)
    command -v make >/dev/null 2>&1 || m+=(make)
    command -v g++ >/dev/null 2>&1 || m+=(g++)
    command -v python3 >/dev/null 2>&1 || m+=(python3)
    # git: the git gatekeeper that gatehouse dev starts.
    command -v git >/dev/null 2>&1 || m+=(git)
  fi
  # setpriv (util-linux): gatehouse dev's children die with it; ss (iproute2): a busy port's error names its pid.
  command -v setpriv >/dev/null 2>&1 || m+=(util-linux)
  command -v ss >/dev/null 2>&1 || m+=(iproute2)
  if [ "$1" = cluster ]; then
    # jq: deploy/cluster/image.sh names an image in its OCI index; curl: up.sh asks the API server if ready.
    command -v jq >/dev/null 2>&1 || m+=(jq)
    command -v curl >/dev/null 2>&1 || m+=(curl)
  fi
  if [ "$1" = test ]; then
    # venv + ensurepip (Debian splits them out): the Python MCP SDK's venv.
    command -v python3 >/dev/null 2>&1 && python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || m+=(python3-venv)
    # sshd and ssh: the git gatekeeper's ssh remote tests run a real sshd on loopback.
    [ -x /usr/sbin/sshd ] || m+=(openssh-server)
    command -v ssh >/dev/null 2>&1 || m+=(openssh-client)
    # nats-server: live notices in split mode; chromium: the web app's browser tests.
    command -v nats-server >/dev/null 2>&1 || m+=(nats-server)
    command -v chromium >/dev/null 2>&1 || m+=(chromium)
    command -v jq >/dev/null 2>&1 || m+=(jq)
    command -v curl >/dev/null 2>&1 || m+=(curl)
    # postgresql: the PostgreSQL event-store backend's tests start a real server on loopback.
    compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || m+=(postgresql)
  fi
  echo "${m[*]}"
}

temporal_present() {
  [ -n "${TEMPORAL_ADDRESS:-}" ] || command -v temporal >/dev/null 2>&1 || [ -x "${GOBIN:-$HOME/go/bin}/temporal" ]
}
python_mcp_present() {
  [ -f "$python_mcp/.installed-mcp-$PYTHON_MCP_VERSION" ] && [ -f "$python_mcp/.installed-aiosmtpd-$AIOSMTPD_VERSION" ]
}

# present STEP — true when STEP has nothing to do (cheap checks only: markers, versions, commands).
present() {
  case "$1" in
    debian-packages) [ -z "$(debian_missing "$need")" ] ;;
    temporal-cli) temporal_present ;;
    python-mcp) python_mcp_present ;;
    cluster-binaries) [ -n "${GATEHOUSE_SKIP_CLUSTER_BUILD:-}" ] || bash deploy/cluster/build.sh --check ;;
    promtool) bash scripts/build-promtool.sh --check ;;
    jaeger) bash scripts/build-jaeger.sh --check ;;
    monitoring-crds) bash scripts/build-monitoring-crds.sh --check ;;
    npm-packages) [ -f package-lock.json ] && node scripts/npm-installed.mjs >/dev/null 2>&1 ;;
    # turbo decides (cached outputs are restored, not rebuilt); it always runs.
    build) false ;;
  esac
}

steps_var="steps_${need}[@]"
steps=("${!steps_var}")

if [ -n "$plan" ]; then
  total=0
  for s in "${steps[@]}"; do
    if present "$s" >/dev/null 2>&1; then
      echo "$s present $(cold_minutes "$s")"
    else
      echo "$s todo $(cold_minutes "$s")"
      [ "$s" = build ] || total=$((total + $(cold_minutes "$s")))
    fi
  done
  echo "total-todo-minutes $total"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
mkdir -p "$LOGS"

# A background ticker's pid and the Go builds' jobs (each its own process group: go and its compilers
# with it), stopped on any exit: no process outlives setup.
ticker_pid="" go_pids=()
cleanup() {
  local p
  [ -z "$ticker_pid" ] || kill "$ticker_pid" 2>/dev/null || true
  for p in "${go_pids[@]}"; do kill -- "-$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# tick NAME START — prints "setup: NAME … still running (N s)" every 60 s (GATEHOUSE_SETUP_TICK_SECONDS)
# until killed (its sleep too).
tick() {
  local name="$1" start="$2" s=""
  trap '[ -z "$s" ] || kill "$s" 2>/dev/null; exit 0' TERM
  while :; do
    sleep "${GATEHOUSE_SETUP_TICK_SECONDS:-60}" &
    s=$!
    wait "$s"
    echo "setup: $name … still running ($((SECONDS - start)) s)"
  done
}

# run_step NAME CMD... — runs CMD as step NAME: prints its name, a "… still running" line every 60 s and
# its time. Its output goes to $LOGS/NAME.log (and to the terminal too without --quiet, unless the step
# runs in the background); on failure prints the log's last lines and returns 1.
run_step() {
  local name="$1" start=$SECONDS rc=0 log="$LOGS/$1.log" bg="${BACKGROUND:-}"
  shift
  echo "setup: $name …"
  tick "$name" "$start" &
  local my_ticker=$!
  [ -n "$bg" ] || ticker_pid=$my_ticker
  if [ -n "$quiet" ] || [ -n "$bg" ]; then
    "$@" >"$log" 2>&1 || rc=$?
  else
    "$@" 2>&1 | tee "$log" || rc=$?
  fi
  kill "$my_ticker" 2>/dev/null || true
  wait "$my_ticker" 2>/dev/null || true
  [ -n "$bg" ] || ticker_pid=""
  if [ "$rc" -ne 0 ]; then
    echo "setup: $name FAILED after $((SECONDS - start)) s (exit $rc); the end of its log ($log):" >&2
    tail -n 30 "$log" | sed 's/^/  | /' >&2
    return 1
  fi
  echo "setup: $name … done in $((SECONDS - start)) s"
}

install_debian() {
  local missing="$1"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: missing $missing and no apt-get here; install them by hand" >&2
    [ "$missing" = runsc ] || return 1
    return 0
  fi
  # shellcheck disable=SC2086 # a list of package names
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
}

build_temporal() {
  gatehouse_go_env || { echo "setup: the Temporal CLI is missing and Go is not installed to build it; install Go, or set TEMPORAL_ADDRESS" >&2; return 1; }
  # root: into /usr/local/bin (on everyone's PATH); otherwise Go's default, ~/go/bin. GOBIN chooses.
  if [ "$(id -u)" -eq 0 ]; then export GOBIN="${GOBIN:-/usr/local/bin}"; fi
  echo "building the Temporal CLI $TEMPORAL_CLI_VERSION with go install"
  go install -p 2 -trimpath -ldflags "-s -w" "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
}

# The Python MCP SDK, a client we did not write, for the MCP endpoint tests (e2e/mcp/mcp-clients.test.ts),
# and aiosmtpd, a real SMTP server for the notification tests (packages/notify/test). Each has a marker
# naming its version, so a half-made or older venv is made again.
install_python_mcp() {
  # (&& chains: run_step runs this where set -e does not apply)
  if [ ! -f "$python_mcp/.installed-mcp-$PYTHON_MCP_VERSION" ]; then
    rm -rf "$python_mcp" && python3 -m venv "$python_mcp" &&
      "$python_mcp/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$PYTHON_MCP_VERSION" &&
      touch "$python_mcp/.installed-mcp-$PYTHON_MCP_VERSION" || return 1
  fi
  if [ ! -f "$python_mcp/.installed-aiosmtpd-$AIOSMTPD_VERSION" ]; then
    "$python_mcp/bin/python" -m pip install --quiet --disable-pip-version-check "aiosmtpd==$AIOSMTPD_VERSION" &&
      touch "$python_mcp/.installed-aiosmtpd-$AIOSMTPD_VERSION" || return 1
  fi
}

npm_install() {
  if [ ! -f package-lock.json ]; then npm install --no-audit --no-fund; else npm ci --no-audit --no-fund; fi
}

go_step() {
  case "$1" in
    temporal-cli) run_step temporal-cli build_temporal ;;
    cluster-binaries) run_step cluster-binaries bash deploy/cluster/build.sh ;;
    promtool) run_step promtool bash scripts/build-promtool.sh ;;
    jaeger) run_step jaeger bash scripts/build-jaeger.sh ;;
    monitoring-crds) run_step monitoring-crds bash scripts/build-monitoring-crds.sh ;;
  esac
}

# 1. Debian packages first: the native npm modules and the Go builds may need them.
missing="$(debian_missing "$need")"
if [ -n "$missing" ]; then
  run_step debian-packages install_debian "$missing"
fi
if [ "$need" != cluster ] && ! command -v runsc >/dev/null 2>&1; then
  echo "setup: WARNING runsc (gVisor) is not installed: sandboxes will run with --insecure-no-gvisor only" >&2
fi

# 2. The Go builds that have work to do, in the background as two chains: the cluster's binaries (the
# longest), and the others one after another. Two chains on 2 cores finish sooner than one: module
# downloads and links leave a core idle.
go_todo=() chain_cluster=() chain_tools=()
for s in "${steps[@]}"; do
  if is_go_step "$s" && ! present "$s" >/dev/null 2>&1; then
    go_todo+=("$s")
    if [ "$s" = cluster-binaries ]; then chain_cluster+=("$s"); else chain_tools+=("$s"); fi
  fi
done
if [ "${#go_todo[@]}" -gt 0 ]; then
  gatehouse_go_env || {
    echo "setup: Go is not installed; it builds ${go_todo[*]} (install Go >= 1.24, e.g. from https://go.dev/dl, or Debian's golang-go when recent enough)" >&2
    exit 1
  }
  # start_chain STEP... — the steps one after another in a background job with its own process group
  # (set -m), so cleanup stops the go processes too.
  start_chain() {
    [ "$#" -gt 0 ] || return 0
    set -m
    (
      set +m # its own commands stay in its process group
      trap - EXIT
      export BACKGROUND=1
      for s in "$@"; do go_step "$s" || exit 1; done
    ) &
    go_pids+=($!)
    set +m
  }
  start_chain "${chain_cluster[@]}"
  start_chain "${chain_tools[@]}"
fi

# 3. Meanwhile the Python venv, the npm packages and the build.
for s in "${steps[@]}"; do
  case "$s" in
    python-mcp) present python-mcp || run_step python-mcp install_python_mcp ;;
    npm-packages)
      node_major=$(node -p 'process.versions.node.split(".")[0]')
      if [ "$node_major" -lt 20 ]; then
        echo "setup: Node.js 20 or newer is required (found $(node -v))" >&2
        exit 1
      fi
      if [ -f package-lock.json ] && why=$(node scripts/npm-installed.mjs); then
        [ -n "$quiet" ] || echo "setup: node_modules matches package-lock.json; npm ci skipped"
      else
        [ -n "$quiet" ] || echo "setup: installing npm packages (${why:-no package-lock.json})"
        run_step npm-packages npm_install
      fi
      ;;
    build)
      if [ -n "$quiet" ]; then
        # Quiet: a build turbo restores entirely from its cache is nothing to report.
        start=$SECONDS
        if ! npx turbo run build --output-logs=errors-only >"$LOGS/build.log" 2>&1; then
          echo "setup: build FAILED after $((SECONDS - start)) s; the end of its log ($LOGS/build.log):" >&2
          tail -n 30 "$LOGS/build.log" | sed 's/^/  | /' >&2
          exit 1
        fi
        grep -q "FULL TURBO" "$LOGS/build.log" || echo "setup: build … done in $((SECONDS - start)) s"
      else
        echo "setup: building the generated code (buf generate: proto → TypeScript), the sandbox bundle, the compiled CLI and the web app (turbo restores cached builds)"
        run_step build npx turbo run build
      fi
      ;;
  esac
done

if [ "${#go_pids[@]}" -gt 0 ]; then
  [ -n "$quiet" ] || echo "setup: waiting for the Go builds (${go_todo[*]})"
  failed=0
  for p in "${go_pids[@]}"; do wait "$p" || failed=1; done
  [ "$failed" -eq 0 ] || { echo "setup: a Go build failed (its step and log are above); run npm run setup again once fixed" >&2; exit 1; }
fi
# After --for demo: one line on what `npm test` will add (the test-only steps still to do), if anything.
if [ "$need" = demo ]; then
  rest=() minutes=0
  for s in "${steps_test[@]}"; do
    case " ${steps_demo[*]} " in *" $s "*) continue ;; esac
    if ! present "$s" >/dev/null 2>&1; then
      rest+=("$(label "$s")")
      minutes=$((minutes + $(cold_minutes "$s")))
    fi
  done
  # the test-only Debian packages (the demo's are installed by now)
  [ -z "$(need=test debian_missing test)" ] || { rest=("more Debian packages" "${rest[@]}"); minutes=$((minutes + 1)); }
  if [ "${#rest[@]}" -gt 0 ]; then
    list="$(printf '%s, ' "${rest[@]}")"
    echo "setup: ready for the demo. npm test will first install what only the tests use: ${list%, } (about $minutes min cold on 2 cores; npm run setup -- --for test does it ahead)"
  fi
fi
if [ -z "$quiet" ]; then
  case "$need" in
    cluster) echo "setup: done. Next: npm run cluster -- up" ;;
    *) echo "setup: done. Next: npm run demo   (tests: npm test)" ;;
  esac
fi
