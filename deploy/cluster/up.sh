#!/usr/bin/env bash
# `npm run cluster -- up`: builds what is missing (build.sh), then starts on this host, each only when
# it is not already running (pid file + health check), and waits until each is healthy:
#   etcd (TLS, 127.0.0.1) → kube-apiserver (Node,RBAC, PodSecurity admission, services 10.96.0.0/16)
#   → containerd v2 (runc + runsc shim) → kube-controller-manager, kube-scheduler → kubelet (bridge CNI)
#   → kube-proxy (iptables) → RuntimeClass gvisor, CoreDNS (Service 10.96.0.10) Ready
#   → the default StorageClass local-path (local-path-provisioner) Ready
#   → kube-network-policies (NetworkPolicy enforcement, netpol.sh).
# Then prints how to use it. A second up reuses what runs and starts only what is down. Serialized with
# down and other ups by a lock ($CACHE/run/.lock). Deadlines are generous (busy 2-core CI machines).
set -euo pipefail
here="$(dirname "$0")"
. "$here/lib.sh"
[ "$(id -u)" -eq 0 ] || die "up needs root (it starts containerd and a kubelet, creates a bridge and iptables rules): run it as root or with sudo"
for t in ip iptables ss curl setsid flock; do command -v "$t" >/dev/null 2>&1 || die "$t is missing (run npm run setup)"; done
mkdir -p "$RUN" "$LOGS" "$PIDS"
exec 9>"$RUN/.lock"
flock -w 900 9 || die "another cluster up/down holds $RUN/.lock for 15 minutes"
started=$SECONDS

bash "$here/build.sh"
bash "$here/certs.sh"
bash "$here/config.sh"
gateway="${POD_CIDR%.*}.1"

sysctl -qw net.ipv4.ip_forward=1
[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || modprobe br_netfilter 2>/dev/null || true
[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] && sysctl -qw net.bridge.bridge-nf-call-iptables=1
# The bridge exists before the first Pod so the apiserver can advertise its address to Pods.
ip link show "$CNI_BRIDGE" >/dev/null 2>&1 || ip link add "$CNI_BRIDGE" type bridge
ip -4 addr show dev "$CNI_BRIDGE" | grep -q "inet $gateway/" || ip addr add "$gateway/${POD_CIDR#*/}" dev "$CNI_BRIDGE"
ip link set "$CNI_BRIDGE" up

pki="$PKI"
etcd_health() {
  curl -fsS --max-time 3 --cacert "$pki/ca.crt" --cert "$pki/apiserver-etcd-client.crt" --key "$pki/apiserver-etcd-client.key" \
    "https://127.0.0.1:$ETCD_CLIENT_PORT/health" | grep -q '"health":"true"'
}
healthz() { curl -fsSk --max-time 3 "$1" >/dev/null; }
node_ready() { [ "$(k get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
ctr_() { ctr --address "$RUN/containerd/containerd.sock" -n k8s.io "$@"; }
containerd_up() { ctr_ version; }

# run_component NAME CHECK PORTS... -- CMD...: reuse when alive and healthy, else start and wait on CHECK
run_component() {
  local name="$1" check="$2"; shift 2
  local ports=()
  while [ "$1" != "--" ]; do ports+=("$1"); shift; done; shift
  if pid_alive "$name" && $check >/dev/null 2>&1; then log "$name: reusing pid $(cat "$PIDS/$name.pid")"; return 0; fi
  if pid_alive "$name"; then
    log "$name: pid $(cat "$PIDS/$name.pid") is running but not healthy; waiting for it"
  else
    local p; for p in ${ports[@]+"${ports[@]}"}; do port_free "$p" "$name"; done
    log "$name: starting"
    start_proc "$name" "$@"
  fi
  wait_until "$name to be healthy" 300 "$name" "$check"
}

run_component etcd etcd_health "$ETCD_CLIENT_PORT" "$ETCD_PEER_PORT" -- \
  etcd --name=gatehouse --data-dir="$RUN/etcd" \
  --listen-client-urls="https://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls="https://127.0.0.1:$ETCD_CLIENT_PORT" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="gatehouse=http://127.0.0.1:$ETCD_PEER_PORT" \
  --cert-file="$pki/etcd.crt" --key-file="$pki/etcd.key" --client-cert-auth --trusted-ca-file="$pki/ca.crt" \
  --unsafe-no-fsync

# Listens on all addresses: Pods reach it at the bridge's address (the `kubernetes` Service's endpoint);
# anonymous requests are refused.
run_component kube-apiserver readyz "$APISERVER_PORT" -- \
  kube-apiserver --bind-address=0.0.0.0 --secure-port="$APISERVER_PORT" --advertise-address="$gateway" \
  --etcd-servers="https://127.0.0.1:$ETCD_CLIENT_PORT" --etcd-cafile="$pki/ca.crt" \
  --etcd-certfile="$pki/apiserver-etcd-client.crt" --etcd-keyfile="$pki/apiserver-etcd-client.key" \
  --client-ca-file="$pki/ca.crt" --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$pki/ca.crt" --kubelet-preferred-address-types=Hostname,InternalIP \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range="$SERVICE_CIDR" --authorization-mode=Node,RBAC \
  --enable-admission-plugins=NodeRestriction,PodSecurity --anonymous-auth=false --profiling=false

run_component containerd containerd_up -- containerd --config "$RUN/containerd/config.toml"

cm_health() { healthz "https://127.0.0.1:$CONTROLLER_MANAGER_PORT/healthz"; }
run_component kube-controller-manager cm_health "$CONTROLLER_MANAGER_PORT" -- \
  kube-controller-manager --kubeconfig="$RUN/controller-manager.kubeconfig" \
  --authentication-kubeconfig="$RUN/controller-manager.kubeconfig" --authorization-kubeconfig="$RUN/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$CONTROLLER_MANAGER_PORT" --leader-elect=false \
  --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" --use-service-account-credentials=true \
  --service-cluster-ip-range="$SERVICE_CIDR" --cluster-name=gatehouse-local \
  --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" --profiling=false

sched_health() { healthz "https://127.0.0.1:$SCHEDULER_PORT/healthz"; }
run_component kube-scheduler sched_health "$SCHEDULER_PORT" -- \
  kube-scheduler --kubeconfig="$RUN/scheduler.kubeconfig" \
  --authentication-kubeconfig="$RUN/scheduler.kubeconfig" --authorization-kubeconfig="$RUN/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false --profiling=false

# The sandbox (pause) image must be in containerd before the kubelet makes its first Pod.
bash "$here/images.sh" pause

run_component kubelet node_ready "$KUBELET_PORT" "$KUBELET_HEALTHZ_PORT" -- \
  kubelet --config="$RUN/kubelet/config.yaml" --kubeconfig="$RUN/kubelet.kubeconfig" \
  --hostname-override="$NODE_NAME" --root-dir="$RUN/kubelet/root" --cert-dir="$RUN/kubelet/pki"

proxy_health() { healthz "http://127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT/healthz"; }
run_component kube-proxy proxy_health "$KUBE_PROXY_METRICS_PORT" "$KUBE_PROXY_HEALTHZ_PORT" -- \
  kube-proxy --kubeconfig="$RUN/kube-proxy.kubeconfig" --proxy-mode=iptables --cluster-cidr="$POD_CIDR" \
  --hostname-override="$NODE_NAME" --metrics-bind-address="127.0.0.1:$KUBE_PROXY_METRICS_PORT" \
  --healthz-bind-address="127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT" --conntrack-max-per-core=0

bash "$here/images.sh" coredns busybox
k apply -f "$here/manifests/runtimeclass.yaml" >/dev/null
sed -e "s|@COREDNS_IMAGE@|$COREDNS_IMAGE|g" -e "s|@CLUSTER_DNS_IP@|$CLUSTER_DNS_IP|g" "$here/manifests/coredns.yaml" \
  | k apply -f - >/dev/null
# rollout status, not readyReplicas: on a reused cluster a changed manifest rolls the pod, and the old
# one is still Ready while the new one starts.
coredns_ready() { k -n kube-system rollout status deploy/coredns --timeout=5s >/dev/null 2>&1; }
wait_until "CoreDNS to be Ready (kubectl -n kube-system describe pod -l k8s-app=kube-dns)" 300 "" coredns_ready

# The default StorageClass: a claim without a class gets a folder under $STORAGE_DIR.
bash "$here/images.sh" local-path-provisioner
mkdir -p "$STORAGE_DIR"
sed -e "s|@PROVISIONER_IMAGE@|$PROVISIONER_IMAGE|g" -e "s|@BUSYBOX_IMAGE@|$BUSYBOX_IMAGE|g" -e "s|@STORAGE_DIR@|$STORAGE_DIR|g" \
  "$here/manifests/local-path.yaml" | k apply -f - >/dev/null
storage_ready() { k -n kube-system rollout status deploy/local-path-provisioner --timeout=5s >/dev/null 2>&1; }
wait_until "the local-path provisioner to be Ready (kubectl -n kube-system describe pod -l app=local-path-provisioner)" 300 "" storage_ready

bash "$here/netpol.sh" start

log "up in $((SECONDS - started)) s: node $NODE_NAME Ready, CoreDNS Ready, RuntimeClass gvisor (handler runsc), default StorageClass local-path"
log "use it: export KUBECONFIG=$KUBECONFIG_FILE   (or: eval \"\$(npm run --silent cluster -- env)\")"
