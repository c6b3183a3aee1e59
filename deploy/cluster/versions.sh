# Pinned versions of everything `npm run cluster` builds or extracts — the ONE place to bump them.
# A binary whose recorded version ($CACHE/bin/.versions/<name>) differs from its pin here is rebuilt.
# shellcheck disable=SC2034  # sourced by lib.sh
KUBERNETES_VERSION=v1.34.4   # kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy
ETCD_VERSION=v3.6.6
CONTAINERD_VERSION=v2.1.5    # containerd, ctr, containerd-shim-runc-v2
# gVisor's buildable "go" branch as the Go proxy serves it (@latest resolved 2026-12-01): runsc and
# containerd-shim-runsc-v1, built from a copy patched to ignore EPERM from the shim's SetOOMScore.
GVISOR_VERSION=v0.0.0-20260905035102-160fafc42237
COREDNS_VERSION=v1.14.7
HELM_VERSION=v3.22.0
UMOCI_VERSION=v0.6.0
LOCAL_PATH_PROVISIONER_VERSION=v0.0.30   # github.com/rancher/local-path-provisioner: the default StorageClass (storage.sh)
KUBE_NETWORK_POLICIES_VERSION=v0.8.0   # sigs.k8s.io/kube-network-policies: enforces NetworkPolicy (netpol.sh)
# Debian packages extracted (apt-get download + dpkg-deb -x), never installed: runc, the CNI plugins and
# a static busybox. Their version is whatever the configured Debian release ships; the marker records it.
DEBIAN_PACKAGES="runc containernetworking-plugins busybox-static"
