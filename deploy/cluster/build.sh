#!/usr/bin/env bash
# Builds everything the local cluster needs into $CACHE/bin, only what is missing or at another version
# than versions.sh pins (~20-25 min cold on 2 idle cores, seconds when cached). Go builds use the set-up's
# shared Go caches (scripts/go-cache.sh). One line per component being built.
# Usage: build.sh [--check] [GROUP...]   groups: tools (helm, umoci), debian (runc, CNI plugins,
#        iptables), kube, etcd, containerd, gvisor, coredns, pause, netpol
#        (kube-network-policies), storage (local-path-provisioner); default: all of them.
#        --check builds nothing: exit 0 when every binary of the groups is present at its pinned
#        version, 1 when something would be built.
set -euo pipefail
here="$(dirname "$0")"
. "$here/lib.sh"
all=(tools debian kube etcd containerd gvisor coredns pause netpol storage)
if [ "${1:-}" = "--check" ]; then export CLUSTER_CHECK=1; shift; fi
[ "$#" -gt 0 ] || set -- "${all[@]}"
start=$SECONDS
for g in "$@"; do
  case "$g" in
    tools) bash "$here/build-go-tools.sh" umoci helm ;;
    debian) bash "$here/build-debian.sh" ;;
    kube) bash "$here/build-kube.sh" ;;
    etcd) bash "$here/build-etcd.sh" ;;
    containerd) bash "$here/build-containerd.sh" ;;
    gvisor) bash "$here/build-gvisor.sh" ;;
    coredns) bash "$here/build-go-tools.sh" coredns ;;
    pause) bash "$here/build-pause.sh" ;;
    netpol) bash "$here/build-netpol.sh" ;;
    storage) bash "$here/build-go-tools.sh" local-path-provisioner ;;
    *) die "build.sh: unknown group $g (one of: ${all[*]})" ;;
  esac
done
[ $((SECONDS - start)) -lt 5 ] || log "build done in $((SECONDS - start)) s (binaries in $BIN)"
