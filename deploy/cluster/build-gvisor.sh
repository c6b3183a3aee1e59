#!/usr/bin/env bash
# Builds gVisor's runsc and containerd-shim-runsc-v1 at $GVISOR_VERSION into $CACHE/bin when missing
# (~3-5 min cold). Debian's runsc has no containerd shim; both come from the Go proxy's copy of gVisor's
# go branch. This VM's root lacks CAP_SYS_RESOURCE and the shim's hard-coded SetOOMScore(pid, -999)
# then fails (EACCES/EPERM), so the build uses a copy of the module patched to ignore that error there
# ($CACHE/src/gvisor-<version>-patched), wired in with a `replace` in a wrapper module.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -n "${CLUSTER_CHECK:-}" ] || build_lock gvisor
go_env

components=(runsc containerd-shim-runsc-v1)
# the marker names the patch too, so a changed patch rebuilds
marker_version="$GVISOR_VERSION+oom-eacces-eperm"
need_build "$marker_version" "${components[@]}"

ver="$GVISOR_VERSION"
patched="$SRC/gvisor-$ver-patched"
mod="$SRC/gvisor-$ver"
if [ "$(cat "$patched/.patched" 2>/dev/null)" != "$marker_version" ]; then
  log "patching a copy of gvisor.dev/gvisor@$ver (shim: ignore EPERM/EACCES from SetOOMScore)"
  orig="$(cd "$SRC" && module_field "gvisor.dev/gvisor@$ver" Dir)"
  [ -d "$orig" ] || die "could not download gvisor.dev/gvisor@$ver from the Go proxy"
  rm -rf "$patched" && cp -r "$orig" "$patched" && chmod -R u+w "$patched"
  f="$patched/pkg/shim/v1/manager.go"
  # the write to /proc/<pid>/oom_score_adj fails with EACCES or EPERM (os.ErrPermission matches both)
  sed -i -e 's|^\t"encoding/json"$|\t"encoding/json"\n\t"errors"|' \
    -e 's|if err := sys.SetOOMScore(cmd.Process.Pid, oomScoreMax); err != nil {|if err := sys.SetOOMScore(cmd.Process.Pid, oomScoreMax); err != nil \&\& !errors.Is(err, os.ErrPermission) {|' "$f"
  grep -q '!errors.Is(err, os.ErrPermission)' "$f" && grep -q '^	"errors"$' "$f" \
    || die "the SetOOMScore patch no longer applies to $f (gVisor $ver changed it): update build-gvisor.sh"
  echo "$marker_version" >"$patched/.patched"
fi
if [ ! -f "$mod/go.sum" ]; then
  rm -rf "$mod" && mkdir -p "$mod"
  printf 'module gatehouse.local/cluster/gvisor\n\ngo 1.26\n\nrequire gvisor.dev/gvisor %s\n\nreplace gvisor.dev/gvisor => %s\n' "$ver" "$patched" >"$mod/go.mod"
  printf '//go:build tools\n\n// Package tools pins the gVisor commands this wrapper module builds.\npackage tools\n\nimport (\n\t_ "gvisor.dev/gvisor/runsc"\n\t_ "gvisor.dev/gvisor/shim"\n)\n' >"$mod/tools.go"
  (cd "$mod" && go mod tidy) || die "go mod tidy failed in $mod (see above); delete $mod to retry"
fi
for c in "${todo[@]}"; do
  pkg=gvisor.dev/gvisor/runsc; [ "$c" = containerd-shim-runsc-v1 ] && pkg=gvisor.dev/gvisor/shim
  log "building $c $ver (~2-4 min cold)"
  go_build_bin "$c" "$marker_version" "$mod" "$pkg" -ldflags "-s -w"
done
