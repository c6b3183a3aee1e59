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
todo=()
for c in "${components[@]}"; do have "$c" "$CONTAINERD_VERSION" || todo+=("$c"); done
[ "${#todo[@]}" -eq 0 ] && exit 0
[ -z "${CLUSTER_CHECK:-}" ] || exit 1   # build.sh --check: something is missing

ver="$CONTAINERD_VERSION"
mod="$SRC/containerd-$ver"
if [ ! -f "$mod/go.sum" ]; then
  log "preparing the containerd $ver wrapper module in $mod"
  rm -rf "$mod" && mkdir -p "$mod"
  gomod="$(cd "$mod" && go mod download -json "github.com/containerd/containerd/v2@$ver" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')"
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
  start=$SECONDS
  (cd "$mod" && CGO_ENABLED=0 go build -p 2 -trimpath -tags "no_btrfs no_devmapper no_zfs" \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$ver" \
    -o "$BIN/$c.tmp" "github.com/containerd/containerd/v2/cmd/$c") || die "building $c $ver failed (see above)"
  mv "$BIN/$c.tmp" "$BIN/$c" && mark "$c" "$ver"
  log "built $c in $((SECONDS - start)) s"
done
