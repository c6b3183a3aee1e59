#!/usr/bin/env bash
# NetworkPolicy enforcement for the local cluster: the bridge CNI does not enforce NetworkPolicy, so up
# runs sigs.k8s.io/kube-network-policies (build-netpol.sh) as a host process, like kube-proxy, and down
# stops it. The agent puts an nftables table `inet kube-network-policies` in the host's network
# namespace that sends the first packet of each new connection to or from a Pod selected by a policy
# to an nfqueue, where it allows or drops it by the policies (fail closed: while the agent is down,
# such Pods get no new connections).
#
# The agent only reads rest.InClusterConfig(): it runs with KUBERNETES_SERVICE_HOST/PORT naming the
# loopback apiserver and, in a private mount namespace (unshare), a tmpfs over /run holding
# /run/secrets/kubernetes.io/serviceaccount/{token,ca.crt} — the token of the kube-system
# ServiceAccount kube-network-policies (manifests/kube-network-policies.yaml: list/watch Pods,
# Namespaces, NetworkPolicies). Nothing is written to the host's /run.
#
# Usage: netpol.sh start|stop|status
#   start   reuse a running, healthy agent, else start it and wait until its table is in place
#   stop    SIGINT (the agent removes its table), KILL after 30 s, then remove a table left behind
#   status  one line: up with its pid, or down
# Log: $CACHE/run/logs/kube-network-policies.log; metrics on 127.0.0.1:$GATEHOUSE_CLUSTER_NETPOL_METRICS_PORT
# (default 10262).
set -euo pipefail
here="$(dirname "$0")"
. "$here/lib.sh"
name=kube-network-policies
table="inet kube-network-policies"
metrics_port="${GATEHOUSE_CLUSTER_NETPOL_METRICS_PORT:-10262}"
sa="$RUN/netpol/serviceaccount"
pidfile="$PIDS/$name.pid"
log_file="$LOGS/$name.log"
healthy() {
  pid_alive "$name" && nft list table $table >/dev/null 2>&1 \
    && curl -fsS --max-time 3 "http://127.0.0.1:$metrics_port/metrics" >/dev/null 2>&1
}
# wait_for SECONDS DESCRIPTION CMD... — polls CMD every 0.5 s; returns 1 naming DESCRIPTION (and the
# log's tail when the agent exited) when SECONDS pass or the agent exits
wait_for() {
  local secs="$1" what="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@"; do
    if [ -f "$pidfile" ] && ! pid_alive "$name"; then
      tail -n 20 "$log_file" >&2 || true
      echo "cluster: $name exited while waiting for $what (log: $log_file, last lines above)" >&2; return 1
    fi
    [ "$SECONDS" -lt "$deadline" ] || { echo "cluster: timed out after ${secs}s waiting for $what (log: $log_file)" >&2; return 1; }
    sleep 0.5
  done
}
token_ready() { [ -n "$(k -n kube-system get secret "$name-token" -o 'jsonpath={.data.token}' 2>/dev/null)" ]; }

start() {
  [ "$(id -u)" -eq 0 ] || die "netpol.sh start needs root (the agent writes nftables rules and reads an nfqueue)"
  [ -x "$BIN/$name" ] || die "$BIN/$name is missing: run npm run cluster -- build netpol"
  command -v unshare >/dev/null 2>&1 || die "unshare is missing (util-linux): run npm run setup"
  if healthy; then log "$name: reusing pid $(cat "$pidfile")"; return 0; fi
  if pid_alive "$name"; then
    log "$name: pid $(cat "$pidfile") is running but not healthy; restarting it"
    stop
  fi
  k apply -f "$here/manifests/kube-network-policies.yaml" >/dev/null
  wait_for 120 "the token of ServiceAccount kube-system/$name (kube-controller-manager fills it in)" token_ready || exit 1
  mkdir -p "$sa" "$LOGS" "$PIDS"
  chmod 0700 "$RUN/netpol"
  k -n kube-system get secret "$name-token" -o 'jsonpath={.data.token}' | base64 -d >"$sa/token"
  cp "$PKI/ca.crt" "$sa/ca.crt"
  echo kube-system >"$sa/namespace"
  local holder
  holder="$(ss -Hltnp "sport = :$metrics_port" 2>/dev/null | head -1)"
  [ -z "$holder" ] || die "port $metrics_port (for $name's metrics) is taken: $holder — stop it, or set GATEHOUSE_CLUSTER_NETPOL_METRICS_PORT"
  log "$name: starting"
  echo "=== $(date -u +%FT%TZ) starting $name $KUBE_NETWORK_POLICIES_VERSION" >>"$log_file"
  # shellcheck disable=SC2016  # $1/$2 expand in the inner shell
  KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$APISERVER_PORT" \
    setsid unshare --mount --propagation private -- sh -c '
      mount -t tmpfs -o size=1m,mode=0755 tmpfs /run &&
      mkdir -p /run/secrets/kubernetes.io/serviceaccount &&
      mount --bind "$1" /run/secrets/kubernetes.io/serviceaccount &&
      shift && exec "$@"' sh "$sa" "$BIN/$name" \
    --hostname-override="$NODE_NAME" --disable-nri --metrics-bind-address="127.0.0.1:$metrics_port" \
    >>"$log_file" 2>&1 </dev/null 8>&- 9>&- &
  echo "$!" >"$pidfile"
  # On failure the agent is stopped: a half-started one may have left a table that queues to nobody.
  wait_for 120 "$name's nftables table ($table) and metrics on 127.0.0.1:$metrics_port" healthy || { stop; exit 1; }
  log "$name: up (pid $(cat "$pidfile")), NetworkPolicies enforced"
}

stop() {
  if pid_alive "$name"; then
    local pid; pid="$(cat "$pidfile")"
    log "$name: stopping pid $pid"
    kill -INT "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null; do
      if [ "$SECONDS" -ge "$deadline" ]; then log "$name: killing pid $pid (did not exit 30 s after SIGINT)"; kill -KILL "$pid" 2>/dev/null || true; break; fi
      sleep 0.2
    done
  fi
  rm -f "$pidfile"
  # A table left behind (agent killed) would hold new connections of policy-selected Pods in a queue
  # nobody reads.
  if command -v nft >/dev/null 2>&1 && nft list table $table >/dev/null 2>&1; then nft delete table $table; fi
  rm -rf "$RUN/netpol"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if healthy; then echo "$name: up (pid $(cat "$pidfile"))"; else echo "$name: down"; fi ;;
  *) die "netpol.sh: unknown command '${1:-}' (one of: start, stop, status)" ;;
esac
