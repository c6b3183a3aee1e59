#!/usr/bin/env bash
# Writes the node's configuration into $CACHE/run (every up; cheap): containerd's config (CRI with
# restrict_oom_score_adj, runc as default runtime, runtime `runsc` → containerd-shim-runsc-v1 on
# systrap), the runsc shim's config, the bridge CNI network (host-local IPAM on $POD_CIDR, portmap) and
# the kubelet's KubeletConfiguration.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mkdir -p "$RUN/containerd" "$RUN/cni/net.d" "$RUN/kubelet" "$RUN/runsc"
gateway="${POD_CIDR%.*}.1"

cat >"$RUN/containerd/config.toml" <<TOML
version = 3
root = "$RUN/containerd/root"
state = "$RUN/containerd/state"

[grpc]
  address = "$RUN/containerd/containerd.sock"

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "$PAUSE_IMAGE"

[plugins.'io.containerd.cri.v1.runtime']
  # this VM's root lacks CAP_SYS_RESOURCE: never lower a process's oom_score_adj
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$BIN/cni"]
    conf_dir = "$RUN/cni/net.d"
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$BIN/runc"
        SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runsc]
      runtime_type = "io.containerd.runsc.v1"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runsc.options]
        TypeUrl = "io.containerd.runsc.v1.options"
        ConfigPath = "$RUN/containerd/runsc.toml"
TOML

cat >"$RUN/containerd/runsc.toml" <<TOML
binary_name = "$BIN/runsc"
root = "$RUN/runsc"
[runsc_config]
  platform = "systrap"
TOML

cat >"$RUN/cni/net.d/10-gatehouse.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "gatehouse",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CNI_BRIDGE",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$RUN/cni/networks",
        "ranges": [[{ "subnet": "$POD_CIDR", "gateway": "$gateway" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
JSON

cat >"$RUN/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: "$PKI/ca.crt" }
authorization: { mode: Webhook }
tlsCertFile: "$PKI/kubelet-serving.crt"
tlsPrivateKeyFile: "$PKI/kubelet-serving.key"
containerRuntimeEndpoint: "unix://$RUN/containerd/containerd.sock"
cgroupDriver: cgroupfs
# this VM runs cgroup v1 and has swap settings the kubelet would refuse by default
failCgroupV1: false
failSwapOn: false
clusterDomain: cluster.local
clusterDNS: ["$CLUSTER_DNS_IP"]
resolvConf: /etc/resolv.conf
# images are imported, never pulled: never garbage-collect them
imageGCHighThresholdPercent: 100
evictionHard: { "memory.available": "50Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%" }
serializeImagePulls: false
YAML
