#!/usr/bin/env bash
# Builds the Pod sandbox ("pause") binary from scripts/cluster/pause/main.go into $CACHE/bin/pause
# (static, seconds); rebuilt when the source changes (its sha256 is the version marker).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -n "${CLUSTER_CHECK:-}" ] || build_lock pause
go_env
ver="src-$(sha256sum "$CLUSTER_DIR/pause/main.go" | cut -c1-16)"
have pause "$ver" && exit 0
[ -z "${CLUSTER_CHECK:-}" ] || exit 1   # build.sh --check: missing
log "building pause (seconds)"
(cd "$CLUSTER_DIR/pause" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$BIN/pause.tmp" .) || die "building pause failed (see above)"
mv "$BIN/pause.tmp" "$BIN/pause" && mark pause "$ver"
