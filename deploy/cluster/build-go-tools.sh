#!/usr/bin/env bash
# Builds single-binary Go tools into $CACHE/bin when missing: helm, umoci (the OCI image tool image.sh
# uses) and coredns (the cluster DNS, packed into an image by up.sh). helm with `go install`; umoci's
# go.mod has a replace directive (go install refuses it), so it is built in a wrapper module that copies
# that directive; coredns in a wrapper module whose main links only the plugins the cluster's Corefile
# (manifests/coredns.yaml) uses: CoreDNS's own main links every plugin, with the AWS, Azure, Google Cloud
# and etcd SDKs they bring, most of its cold build. Static binaries (CGO_ENABLED=0) so coredns runs from a
# bare rootfs.
# Usage: build-go-tools.sh [NAME...]   (default: all three)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -n "${CLUSTER_CHECK:-}" ] || build_lock go-tools
go_env

declare -A pkg=(
  [helm]="helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  [umoci]="github.com/opencontainers/umoci/cmd/umoci@$UMOCI_VERSION"
  [coredns]="github.com/coredns/coredns@$COREDNS_VERSION"
  [local-path-provisioner]="github.com/rancher/local-path-provisioner@$LOCAL_PATH_PROVISIONER_VERSION"
)
declare -A est=([helm]="~3 min cold" [umoci]="~1 min cold" [coredns]="~3 min cold" [local-path-provisioner]="~3 min cold")
# The Corefile's plugins (manifests/coredns.yaml); add one here before using it there.
COREDNS_PLUGINS=(errors health ready kubernetes forward cache loop loadbalance)
# wrapped_build NAME MODULE VERSION PACKAGE — go build PACKAGE in a wrapper module requiring MODULE@VERSION
# with MODULE's own single-line `replace A => B vX` directives copied (they only apply in the main module).
wrapped_build() {
  local name="$1" module="$2" ver="$3" package="$4" mod="$SRC/$1-$3" gomod
  if [ ! -f "$mod/go.sum" ]; then
    rm -rf "$mod" && mkdir -p "$mod"
    gomod="$(cd "$mod" && module_field "$module@$ver" GoMod)"
    [ -f "$gomod" ] || die "could not download $module@$ver's go.mod from the Go proxy"
    {
      printf 'module gatehouse.local/cluster/%s\n\ngo %s\n\nrequire %s %s\n\n' "$name" "$(sed -n 's/^go //p' "$gomod")" "$module" "$ver"
      grep -E '^replace [^ ]+ => [^ ]+ v[^ ]+$' "$gomod" || true
    } >"$mod/go.mod"
    printf '//go:build tools\n\n// Package tools pins the command this wrapper module builds.\npackage tools\n\nimport _ "%s"\n' "$package" >"$mod/tools.go"
    (cd "$mod" && go mod tidy) || die "go mod tidy failed in $mod (see above); delete $mod to retry"
  fi
  (cd "$mod" && CGO_ENABLED=0 go build -p 2 -trimpath -ldflags "-s -w" -o "$BIN/$name.tmp" "$package") || die "building $name $ver failed (see above)"
  mv "$BIN/$name.tmp" "$BIN/$name"
}

# coredns_build VERSION — CoreDNS at VERSION with COREDNS_PLUGINS only, into $BIN/coredns.tmp.
coredns_build() {
  local ver="$1" mod="$SRC/coredns-$1" gomod p
  if [ ! -f "$mod/go.sum" ]; then
    rm -rf "$mod" && mkdir -p "$mod"
    gomod="$(cd "$mod" && module_field "github.com/coredns/coredns@$ver" GoMod)"
    [ -f "$gomod" ] || die "could not download github.com/coredns/coredns@$ver's go.mod from the Go proxy"
    printf 'module gatehouse.local/cluster/coredns\n\ngo %s\n\nrequire github.com/coredns/coredns %s\n' \
      "$(sed -n 's/^go //p' "$gomod")" "$ver" >"$mod/go.mod"
    {
      echo "// Command coredns is CoreDNS with only the plugins the local cluster's Corefile uses."
      echo "package main"
      echo
      echo "import ("
      echo "	\"github.com/coredns/coredns/coremain\""
      for p in "${COREDNS_PLUGINS[@]}"; do echo "	_ \"github.com/coredns/coredns/plugin/$p\""; done
      echo ")"
      echo
      echo "func main() { coremain.Run() }"
    } >"$mod/main.go"
    (cd "$mod" && go mod tidy) || die "go mod tidy failed in $mod (see above); delete $mod to retry"
  fi
  (cd "$mod" && CGO_ENABLED=0 go build -p 2 -trimpath -ldflags "-s -w" -o "$BIN/coredns.tmp" .) || die "building coredns $ver failed (see above)"
  mv "$BIN/coredns.tmp" "$BIN/coredns"
}

[ "$#" -gt 0 ] || set -- helm umoci coredns
for name in "$@"; do
  [ -n "${pkg[$name]:-}" ] || die "build-go-tools.sh: unknown tool $name (one of: ${!pkg[*]})"
  want="${pkg[$name]##*@}"
  have "$name" "$want" && continue
  # A binary installed by hand (or by a previous layout) at the pinned version counts once checked.
  if [ -x "$BIN/$name" ] && [ ! -f "$(marker "$name")" ] && grep -q "[[:space:]]$want[[:space:]]" <<<"$(go version -m "$BIN/$name" 2>/dev/null)"; then
    mark "$name" "$want"; continue
  fi
  [ -z "${CLUSTER_CHECK:-}" ] || exit 1   # build.sh --check: missing
  log "building $name $want (${est[$name]})"
  start=$SECONDS
  if [ "$name" = umoci ]; then
    wrapped_build umoci github.com/opencontainers/umoci "$want" github.com/opencontainers/umoci/cmd/umoci
  elif [ "$name" = coredns ]; then
    coredns_build "$want"
  else
    GOBIN="$BIN" CGO_ENABLED=0 go install -p 2 -trimpath -ldflags "-s -w" "${pkg[$name]}" || die "building $name $want failed (see above)"
  fi
  mark "$name" "$want"
  log "built $name in $((SECONDS - start)) s"
done
