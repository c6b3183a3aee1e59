#!/usr/bin/env bash
# Builds the Kubernetes binaries at $KUBERNETES_VERSION into $CACHE/bin, only those missing or at
# another version: kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy.
# `go install k8s.io/kubernetes/cmd/...@v` is refused (kubernetes' go.mod has replace directives), so a
# wrapper module in $CACHE/src requires k8s.io/kubernetes and points each staging module it replaces
# (./staging/src/k8s.io/X) at the published k8s.io/X v0.<minor>.<patch>.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -n "${CLUSTER_CHECK:-}" ] || build_lock kubernetes
go_env

components=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
need_build "$KUBERNETES_VERSION" "${components[@]}"

ver="$KUBERNETES_VERSION"
staging="v0.${ver#v1.}"   # v1.34.4 -> v0.34.4
mod="$SRC/kubernetes-$ver"
if [ ! -f "$mod/go.sum" ]; then
  log "preparing the kubernetes $ver wrapper module in $mod (module downloads, ~1-3 min cold)"
  rm -rf "$mod" && mkdir -p "$mod"
  gomod="$(cd "$mod" && module_field "k8s.io/kubernetes@$ver" GoMod)"
  [ -f "$gomod" ] || die "could not download k8s.io/kubernetes@$ver's go.mod from the Go proxy ($(go env GOPROXY))"
  {
    echo "module gatehouse.local/cluster/kubernetes"
    echo
    echo "go 1.24.0"
    echo
    echo "godebug default=go1.24"
    echo
    echo "require k8s.io/kubernetes $ver"
    echo
    echo "replace ("
    # every `k8s.io/X => ./staging/src/k8s.io/X` of kubernetes' own replace block
    sed -n 's#^\t\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/[a-z0-9-]*$#\t\1 => \1 '"$staging"'#p' "$gomod"
    echo ")"
  } >"$mod/go.mod"
  {
    echo "//go:build tools"
    echo
    echo "// Package tools pins the Kubernetes commands this wrapper module builds."
    echo "package tools"
    echo
    echo "import ("
    for c in "${components[@]}"; do echo "	_ \"k8s.io/kubernetes/cmd/$c\""; done
    echo ")"
  } >"$mod/tools.go"
  (cd "$mod" && go mod tidy) || die "go mod tidy failed in $mod (see above); delete $mod to retry"
fi

ldflags="-s -w"
for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  minor="${ver#v1.}"; minor="${minor%%.*}"
  ldflags+=" -X $p.gitVersion=$ver -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
estimate() { case "$1" in kube-apiserver) echo "~12 min cold";; *) echo "~1-2 min after kube-apiserver";; esac; }
for c in "${todo[@]}"; do
  log "building $c $ver ($(estimate "$c"))"
  go_build_bin "$c" "$ver" "$mod" "k8s.io/kubernetes/cmd/$c" -ldflags "$ldflags"
done
