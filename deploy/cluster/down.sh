#!/usr/bin/env bash
# `npm run cluster -- down`: stops the cluster up started and removes what it left on the host; keeps
# the binaries ($CACHE/bin), the Go caches, the PKI and kubeconfigs ($CACHE/run/pki, *.kubeconfig) and
# the image archives. In order: the components by pid in reverse start order (each one's whole process
# group, TERM then KILL after 30 s), the container shims of this containerd and what runs in the Pods'
# cgroups, kube-proxy's rules (kube-proxy --cleanup), the CNI's rules and bridge, every mount under
# $CACHE/run (netns, rootfs, volumes), the Pods' cgroups, then the runtime state (etcd data, containerd
# root and state, kubelet folder). Idempotent: a second down finds nothing to do.
set -euo pipefail
here="$(dirname "$0")"
. "$here/lib.sh"
[ "$(id -u)" -eq 0 ] || die "down needs root (it removes mounts, a bridge, iptables rules and cgroups)"
[ -d "$RUN" ] || { log "nothing to stop ($RUN does not exist)"; exit 0; }
exec 9>"$RUN/.lock"
flock -w 900 9 || die "another cluster up/down holds $RUN/.lock for 15 minutes"

# stop_pids DESCRIPTION PID...: TERM each pid's process group and the pid, KILL what is left after 30 s
stop_pids() {
  local what="$1"; shift
  [ "$#" -gt 0 ] || return 0
  local p; for p in "$@"; do kill -TERM -- "-$p" 2>/dev/null || true; kill -TERM "$p" 2>/dev/null || true; done
  local deadline=$((SECONDS + 30)) alive
  while :; do
    alive=(); for p in "$@"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done
    [ "${#alive[@]}" -eq 0 ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      log "$what: killing ${alive[*]} (did not exit 30 s after SIGTERM)"
      for p in "${alive[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; kill -KILL "$p" 2>/dev/null || true; done
      return 0
    fi
    sleep 0.2
  done
}

# kube-network-policies first (SIGINT: it removes its nftables table), then the components
bash "$here/netpol.sh" stop
for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
  name="${COMPONENTS[$i]}"
  f="$PIDS/$name.pid"
  [ -f "$f" ] || continue
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then log "$name: stopping pid $pid"; stop_pids "$name" "$pid"; fi
  rm -f "$f"
done

# Container shims started by this containerd (they run in their own sessions, started with
# `-address $RUN/containerd/containerd.sock`), then anything left in the Pods' cgroups.
sock="$RUN/containerd/containerd.sock"
shims=()
for d in /proc/[0-9]*; do
  cmd="$({ tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null)" || continue
  case "$cmd" in *containerd-shim*"-address $sock "*) shims+=("${d#/proc/}") ;; esac
done
[ "${#shims[@]}" -eq 0 ] || { log "stopping ${#shims[@]} container shim(s)"; stop_pids shims "${shims[@]}"; }
cgroups=()
for ctl in /sys/fs/cgroup/*/; do
  [ -d "${ctl}kubepods" ] && cgroups+=("${ctl}kubepods")
done
[ -d /sys/fs/cgroup/kubepods.slice ] && cgroups+=(/sys/fs/cgroup/kubepods.slice)
if [ "${#cgroups[@]}" -gt 0 ]; then
  mapfile -t left < <(find "${cgroups[@]}" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
  [ "${#left[@]}" -eq 0 ] || { log "stopping ${#left[@]} process(es) left in the Pods' cgroups"; stop_pids pods "${left[@]}"; }
fi

# kube-proxy's iptables/nftables rules
[ -x "$BIN/kube-proxy" ] && "$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
bash "$here/cni-cleanup.sh"

# Mounts under $RUN (deepest first), e.g. netns, container rootfs, kubelet volumes
mapfile -t mounts < <(awk -v run="$RUN/" 'index($5, run) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
for m in ${mounts[@]+"${mounts[@]}"}; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"; done

# The Pods' cgroups (the kubelet's kubepods tree), deepest first
for cg in ${cgroups[@]+"${cgroups[@]}"}; do find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true; done

rm -rf "$RUN/etcd" "$RUN/containerd/root" "$RUN/containerd/state" "$RUN/kubelet" "$RUN/runsc" "$RUN/cni/networks" "$STORAGE_DIR"
log "down: stopped; binaries kept in $BIN, certificates and kubeconfig kept in $RUN"
