#!/usr/bin/env bash
# `npm run cluster -- status`: one line per component ("etcd up pid 123" / "etcd down"), then the node's
# readiness, CoreDNS, the local-path provisioner, and the kubeconfig path. Exit 0 when every component is up and the node is Ready,
# 3 otherwise (so scripts can ask "is it up?").
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ok=1
for name in "${COMPONENTS[@]}"; do
  if pid_alive "$name"; then printf '%-24s up    pid %s\n' "$name" "$(cat "$PIDS/$name.pid")"
  else printf '%-24s down\n' "$name"; ok=0; fi
done
if pid_alive kube-network-policies; then printf '%-24s up    pid %s\n' kube-network-policies "$(cat "$PIDS/kube-network-policies.pid")"
else printf '%-24s down\n' kube-network-policies; ok=0; fi
node="unknown (apiserver down)"; dns="unknown"; storage="unknown"
if pid_alive kube-apiserver && [ -f "$PKI/admin.crt" ] && readyz; then
  ready="$(k get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)"
  case "$ready" in True) node="Ready" ;; "") node="not registered"; ok=0 ;; *) node="NotReady"; ok=0 ;; esac
  dns="$(k -n kube-system get deploy coredns -o 'jsonpath={.status.readyReplicas}' 2>/dev/null || true)"
  [ "$dns" = 1 ] && dns="Ready" || dns="not Ready"
  storage="$(k -n kube-system get deploy local-path-provisioner -o 'jsonpath={.status.readyReplicas}' 2>/dev/null || true)"
  [ "$storage" = 1 ] && storage="Ready (default StorageClass local-path)" || storage="not Ready"
else
  ok=0
fi
printf '%-24s %s\n' "node $NODE_NAME" "$node" "coredns" "$dns" "local-path-provisioner" "$storage" "kubeconfig" "$KUBECONFIG_FILE"
[ "$ok" = 1 ] || exit 3
