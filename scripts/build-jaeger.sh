#!/usr/bin/env bash
# Builds the Jaeger all-in-one binary (an OTLP receiver with a trace query API) from the Go module proxy
# into ${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/gatehouse}/jaeger/bin/jaeger, only when missing or
# at another version. The tracing tests (packages/telemetry) export spans to it and read them back.
# A wrapper module pins the command with `go get -tool`; the Go caches are the set-up's shared ones
# (scripts/go-cache.sh).
# Usage: build-jaeger.sh [--check] [--print-path]
#   --check       builds nothing: exit 0 when the binary is there at the pinned version, 1 otherwise
#   --print-path  prints the binary's path (built or not) and exits
set -euo pipefail
JAEGER_VERSION=v1.75.0
CACHE="${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse}/jaeger"
BIN="$CACHE/bin/jaeger"
MARKER="$CACHE/bin/.version"
case "${1:-}" in
  --print-path) echo "$BIN"; exit 0 ;;
  --check) [ -x "$BIN" ] && [ "$(cat "$MARKER" 2>/dev/null)" = "$JAEGER_VERSION" ]; exit $? ;;
  "") ;;
  *) echo "build-jaeger: unknown option $1 (--check or --print-path)" >&2; exit 2 ;;
esac
if [ -x "$BIN" ] && [ "$(cat "$MARKER" 2>/dev/null)" = "$JAEGER_VERSION" ]; then exit 0; fi
# shellcheck source=go-cache.sh
. "$(dirname "$0")/go-cache.sh"
gatehouse_go_env || { echo "build-jaeger: Go is needed to build Jaeger $JAEGER_VERSION; install Go" >&2; exit 1; }
mkdir -p "$CACHE/bin" "$CACHE/src"
mod="$CACHE/src/jaeger-$JAEGER_VERSION"
start=$SECONDS
echo "build-jaeger: building Jaeger $JAEGER_VERSION into $BIN (several minutes cold on 2 cores)"
if [ ! -f "$mod/.ready" ]; then
  rm -rf "$mod" && mkdir -p "$mod"
  (cd "$mod" && go mod init gatehouse.local/jaeger >/dev/null 2>&1 &&
    go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION") ||
    { echo "build-jaeger: go get -tool github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION failed (see above); delete $mod to retry" >&2; exit 1; }
  touch "$mod/.ready"
fi
(cd "$mod" && CGO_ENABLED=0 go build -p 2 -trimpath -ldflags "-s -w" -o "$BIN.tmp" github.com/jaegertracing/jaeger/cmd/jaeger) ||
  { echo "build-jaeger: building Jaeger $JAEGER_VERSION failed (see above)" >&2; exit 1; }
mv "$BIN.tmp" "$BIN"
echo "$JAEGER_VERSION" >"$MARKER"
echo "build-jaeger: built Jaeger $JAEGER_VERSION in $((SECONDS - start)) s"
