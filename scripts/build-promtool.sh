#!/usr/bin/env bash
# Builds promtool (Prometheus's rule checker and rule unit-test runner) from the Go module proxy into
# ${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/gatehouse}/promtool/bin/promtool, only when it is
# missing or at another version than PROMTOOL_VERSION. The chart's tests (deploy/test/monitoring*.test.ts)
# run it on the rendered PrometheusRule and the Grafana dashboard's queries. Built with the remove_all_sd
# tag: promtool's service-discovery plugins (AWS, Azure, GCE, Consul...) are left out, which the tests never
# call and which were most of the build. The Go caches are the set-up's shared ones (scripts/go-cache.sh).
# Debian's promtool (package prometheus, 2.42 in bookworm) does not fit: its `promtool test rules` has no
# --run, which deploy/test/promtool.test.ts uses to run one rule group's tests.
# Usage: build-promtool.sh [--check] [--print-path]
#   --check       builds nothing: exit 0 when promtool is there at the pinned version, 1 otherwise
#   --print-path  prints where the binary is (or will be) and exits
set -euo pipefail
# Prometheus's Go module is tagged v0.<major*100+minor>.<patch>: v0.316.0 is Prometheus 3.16.0.
PROMTOOL_VERSION=v0.316.0
ROOT="${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse}/promtool"
BIN="$ROOT/bin/promtool"
MARK="$ROOT/bin/.version"

case "${1:-}" in
  --print-path) echo "$BIN"; exit 0 ;;
  --check) [ -x "$BIN" ] && [ "$(cat "$MARK" 2>/dev/null)" = "$PROMTOOL_VERSION" ]; exit ;;
  "") ;;
  *) echo "build-promtool: unknown option $1 (options: --check, --print-path)" >&2; exit 2 ;;
esac

if [ -x "$BIN" ] && [ "$(cat "$MARK" 2>/dev/null)" = "$PROMTOOL_VERSION" ]; then exit 0; fi
# shellcheck source=go-cache.sh
. "$(dirname "$0")/go-cache.sh"
gatehouse_go_env || { echo "build-promtool: Go is not installed; install Go >= 1.24 to build promtool" >&2; exit 1; }

mkdir -p "$ROOT/bin"
# One build at a time on this machine: a second caller waits, then finds the binary built.
exec 8>"$ROOT/.build.lock"
flock 8
if [ -x "$BIN" ] && [ "$(cat "$MARK" 2>/dev/null)" = "$PROMTOOL_VERSION" ]; then exit 0; fi

echo "build-promtool: building promtool $PROMTOOL_VERSION with go install (about 3 min cold on 2 cores; seconds after)"
start=$SECONDS
tmp="$ROOT/bin.tmp"
rm -rf "$tmp"
GOBIN="$tmp" CGO_ENABLED=0 go install -p 2 -trimpath -tags remove_all_sd -ldflags "-s -w" \
  "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION" \
  || { echo "build-promtool: building promtool $PROMTOOL_VERSION failed (see above)" >&2; exit 1; }
mv "$tmp/promtool" "$BIN"
rm -rf "$tmp"
echo "$PROMTOOL_VERSION" >"$MARK"
echo "build-promtool: built $BIN in $((SECONDS - start)) s"
