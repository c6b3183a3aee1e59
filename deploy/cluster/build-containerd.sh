#!/usr/bin/env bash
# Builds containerd $CONTAINERD_VERSION (containerd, ctr, containerd-shim-runc-v2) into $CACHE/bin when
# missing (~1-2 min cold). Debian's containerd 1.6 cannot read the gVisor shim's bootstrap address, so
# v2 comes from the Go proxy through a wrapper module that copies containerd's own `exclude` block
# (go install refuses modules with exclude/replace directives).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -n "${CLUSTER_CHECK:-}" ] || build_lock containerd
go_env

components=(containerd ctr containerd-shim-runc-v2)
need_build "$CONTAINERD_VERSION" "${components[@]}"

ver="$CONTAINERD_VERSION"
mod="$SRC/containerd-$ver"
if [ ! -f "$mod/go.sum" ]; then
  log "preparing the containerd $ver wrapper module in $mod"
  rm -rf "$mod" && mkdir -p "$mod"
  gomod="$(cd "$mod" && module_field "github.com/containerd/containerd/v2@$ver" GoMod)"
  [ -f "$gomod" ] || die "could not download containerd $ver's go.mod from the Go proxy"
  {
    printf 'module gatehouse.local/cluster/containerd\n\ngo 1.23.0\n\nrequire github.com/containerd/containerd/v2 %s\n\n' "$ver"
    sed -n '/^exclude (/,/^)/p' "$gomod"
  } >"$mod/go.mod"
  {
    printf '//go:build tools\n\n// Package tools pins the containerd commands this wrapper module builds.\npackage tools\n\nimport (\n'
    for c in "${components[@]}"; do printf '\t_ "github.com/containerd/containerd/v2/cmd/%s"\n' "$c"; done
    printf ')\n'
  } >"$mod/tools.go"
  (cd "$mod" && go mod tidy) || die "go mod tidy failed in $mod (see above); delete $mod to retry"
fi
for c in "${todo[@]}"; do
  log "building $c $ver (~1 min cold)"
  go_build_bin "$c" "$ver" "$mod" "github.com/containerd/containerd/v2/cmd/$c" -tags "no_btrfs no_devmapper no_zfs" \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$ver"
done
