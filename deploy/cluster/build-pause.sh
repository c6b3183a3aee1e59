#!/usr/bin/env bash
# Builds the Pod sandbox ("pause") binary from deploy/cluster/pause/main.go into $CACHE/bin/pause
# (static, seconds); rebuilt when the source changes (its sha256 is the version marker).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -n "${CLUSTER_CHECK:-}" ] || build_lock pause
go_env
ver="src-$(sha256sum "$CLUSTER_DIR/pause/main.go" | cut -c1-16)"
need_build "$ver" pause
log "building pause (seconds)"
go_build_bin pause "$ver" "$CLUSTER_DIR/pause" . -ldflags "-s -w"
