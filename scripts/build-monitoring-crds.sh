#!/usr/bin/env bash
# Generates the Prometheus Operator's CustomResourceDefinitions of monitoring.coreos.com/v1 (ServiceMonitor,
# PrometheusRule, ...) from the operator's Go API types with controller-gen, both from the Go module proxy,
# into ${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/gatehouse}/monitoring-crds/crds/, only when missing
# or made at other versions. The chart's server-side test (deploy/test/chart-monitoring-server.test.ts)
# installs them on the local cluster, so its API server validates the rendered PrometheusRule and
# ServiceMonitors. controller-gen ~2 min cold on a busy 2-core machine, the CRDs seconds.
# Usage: build-monitoring-crds.sh [--check] [--print-dir]
#   --check      builds nothing: exit 0 when the CRDs are there at the pinned versions, 1 otherwise
#   --print-dir  prints the folder of the CRD files and exits
set -euo pipefail
# github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring (the API types) and controller-tools.
OPERATOR_API_VERSION=v0.95.2
CONTROLLER_TOOLS_VERSION=v0.23.0
ROOT="${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse}/monitoring-crds"
OUT="$ROOT/crds"
MARK="$OUT/.versions"
WANT="$OPERATOR_API_VERSION $CONTROLLER_TOOLS_VERSION"

done_already() { [ -f "$OUT/monitoring.coreos.com_prometheusrules.yaml" ] && [ "$(cat "$MARK" 2>/dev/null)" = "$WANT" ]; }
case "${1:-}" in
  --print-dir) echo "$OUT"; exit 0 ;;
  --check) done_already; exit ;;
  "") ;;
  *) echo "build-monitoring-crds: unknown option $1 (options: --check, --print-dir)" >&2; exit 2 ;;
esac
done_already && exit 0
# shellcheck source=go-cache.sh
. "$(dirname "$0")/go-cache.sh"
gatehouse_go_env || { echo "build-monitoring-crds: Go is not installed; install Go >= 1.24" >&2; exit 1; }

mkdir -p "$ROOT/bin" "$ROOT/src"
exec 8>"$ROOT/.build.lock"
flock 8
done_already && exit 0
start=$SECONDS
fail() { echo "build-monitoring-crds: $* (see above)" >&2; exit 1; }

gen="$ROOT/bin/controller-gen-$CONTROLLER_TOOLS_VERSION"
if [ ! -x "$gen" ]; then
  echo "build-monitoring-crds: building controller-gen $CONTROLLER_TOOLS_VERSION with go install"
  GOBIN="$ROOT/bin.tmp" CGO_ENABLED=0 go install -p 2 -trimpath -ldflags "-s -w" \
    "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_TOOLS_VERSION" || fail "building controller-gen failed"
  mv "$ROOT/bin.tmp/controller-gen" "$gen" && rm -rf "$ROOT/bin.tmp"
fi

# A wrapper module requiring the API types, so controller-gen loads them as a package of a module.
api=github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring
mod="$ROOT/src/api-$OPERATOR_API_VERSION"
if [ ! -f "$mod/go.sum" ]; then
  rm -rf "$mod" && mkdir -p "$mod"
  gomod="$(cd "$mod" && go mod download -json "$api@$OPERATOR_API_VERSION" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')"
  [ -f "$gomod" ] || fail "could not download $api@$OPERATOR_API_VERSION's go.mod from the Go proxy"
  printf 'module gatehouse.local/monitoring-crds\n\ngo %s\n\nrequire %s %s\n' \
    "$(sed -n 's/^go //p' "$gomod")" "$api" "$OPERATOR_API_VERSION" >"$mod/go.mod"
  printf '//go:build tools\n\n// Package tools pins the API types the CRDs are generated from.\npackage tools\n\nimport _ "%s/v1"\n' \
    "$api" >"$mod/tools.go"
  (cd "$mod" && go mod tidy) || fail "go mod tidy failed in $mod; delete it to retry"
fi

echo "build-monitoring-crds: generating the monitoring.coreos.com/v1 CRDs ($api $OPERATOR_API_VERSION)"
rm -rf "$OUT.tmp" && mkdir -p "$OUT.tmp"
(cd "$mod" && "$gen" crd:crdVersions=v1,maxDescLen=0 "paths=$api/v1" "output:crd:dir=$OUT.tmp") \
  || fail "controller-gen failed"
[ -f "$OUT.tmp/monitoring.coreos.com_prometheusrules.yaml" ] || fail "controller-gen wrote no PrometheusRule CRD"
echo "$WANT" >"$OUT.tmp/.versions"
rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"
echo "build-monitoring-crds: wrote $OUT in $((SECONDS - start)) s"
