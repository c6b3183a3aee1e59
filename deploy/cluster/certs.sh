#!/usr/bin/env bash
# Makes the cluster's PKI in $CACHE/run/pki with openssl (once; kept across down/up so kubeconfigs stay
# valid): a CA, serving certs (kube-apiserver: SANs 127.0.0.1, localhost, the first service IP and
# kubernetes.default.svc…; etcd and kubelet: 127.0.0.1 and localhost), client certs (admin in
# system:masters, the controller manager, scheduler, kube-proxy, system:node:localhost in system:nodes,
# the apiserver's kubelet and etcd clients) and the service-account signing key. EC P-256, 1 year.
# Then writes a kubeconfig per client ($CACHE/run/<name>.kubeconfig; the admin one is $CACHE/run/kubeconfig).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null 2>&1 || die "openssl is missing (apt-get install openssl)"
command -v kubectl >/dev/null 2>&1 || die "kubectl is missing (apt-get install kubectl, or any kubectl >= 1.32 on PATH)"
mkdir -p "$PKI" && chmod 700 "$PKI"
cd "$PKI"

key() { [ -f "$1.key" ] || openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null; }
if [ ! -f ca.crt ]; then
  key ca
  openssl req -x509 -new -key ca.key -sha256 -days 365 -subj "/CN=gatehouse-local-cluster-ca" -out ca.crt 2>/dev/null
fi
# cert NAME SUBJECT USAGE [SAN]: USAGE is serverAuth or clientAuth
cert() {
  local name="$1" subj="$2" usage="$3" san="${4:-}"
  [ -f "$name.crt" ] && return 0
  key "$name"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [ -z "$san" ] || echo "subjectAltName=$san"
  } >"$name.ext"
  openssl req -new -key "$name.key" -subj "$subj" -out "$name.csr" 2>/dev/null
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 -sha256 \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}
cert apiserver "/CN=kube-apiserver" serverAuth \
  "IP:127.0.0.1,IP:$SERVICE_FIRST_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert etcd "/CN=etcd" serverAuth,clientAuth "IP:127.0.0.1,DNS:localhost"
cert kubelet-serving "/CN=system:node:$NODE_NAME/O=system:nodes" serverAuth "IP:127.0.0.1,DNS:localhost"
cert admin "/CN=gatehouse-admin/O=system:masters" clientAuth
cert controller-manager "/CN=system:kube-controller-manager" clientAuth
cert scheduler "/CN=system:kube-scheduler" clientAuth
cert kube-proxy "/CN=system:kube-proxy" clientAuth
cert kubelet "/CN=system:node:$NODE_NAME/O=system:nodes" clientAuth
cert apiserver-kubelet-client "/CN=kube-apiserver-kubelet-client/O=system:masters" clientAuth
cert apiserver-etcd-client "/CN=kube-apiserver-etcd-client" clientAuth
[ -f sa.key ] || key sa
[ -f sa.pub ] || openssl ec -in sa.key -pubout -out sa.pub 2>/dev/null
chmod 600 ./*.key

# kubeconfig FILE CERTNAME
kubeconfig() {
  local file="$1" name="$2"
  [ -f "$file" ] && grep -q "server: https://127.0.0.1:$APISERVER_PORT$" "$file" && return 0
  rm -f "$file"
  kubectl config --kubeconfig="$file" set-cluster gatehouse-local --server="https://127.0.0.1:$APISERVER_PORT" \
    --certificate-authority="$PKI/ca.crt" --embed-certs=true >/dev/null
  kubectl config --kubeconfig="$file" set-credentials "$name" --client-certificate="$PKI/$name.crt" \
    --client-key="$PKI/$name.key" --embed-certs=true >/dev/null
  kubectl config --kubeconfig="$file" set-context gatehouse-local --cluster=gatehouse-local --user="$name" >/dev/null
  kubectl config --kubeconfig="$file" use-context gatehouse-local >/dev/null
  chmod 600 "$file"
}
kubeconfig "$KUBECONFIG_FILE" admin
for n in controller-manager scheduler kube-proxy kubelet; do kubeconfig "$RUN/$n.kubeconfig" "$n"; done
