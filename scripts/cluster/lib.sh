# Shared paths and helpers for scripts/cluster/*.sh (sourced, not run).
#
# Layout (agreed between the cluster, chart and images scripts — keep it):
#   CACHE=${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse}/cluster
#   $CACHE/bin/          built and extracted binaries (+ cni/ plugins, .versions/ markers)
#   $CACHE/go/{cache,mod} GOCACHE and GOMODCACHE of every build
#   $CACHE/src/          wrapper modules (one folder per build)
#   $CACHE/run/          runtime state: pki/, etcd/, containerd/, kubelet/, logs/, pids/, kubeconfig
# shellcheck disable=SC2034
CLUSTER_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.sh
. "$CLUSTER_DIR/versions.sh"

CACHE="${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse}/cluster"
BIN="$CACHE/bin"
SRC="$CACHE/src"
RUN="$CACHE/run"
LOGS="$RUN/logs"
PIDS="$RUN/pids"
PKI="$RUN/pki"
KUBECONFIG_FILE="$RUN/kubeconfig"

# Ports and addresses (all on loopback; override with the environment variable named).
APISERVER_PORT="${GATEHOUSE_CLUSTER_APISERVER_PORT:-6443}"
ETCD_CLIENT_PORT="${GATEHOUSE_CLUSTER_ETCD_PORT:-2379}"
ETCD_PEER_PORT="${GATEHOUSE_CLUSTER_ETCD_PEER_PORT:-2380}"
KUBELET_PORT="${GATEHOUSE_CLUSTER_KUBELET_PORT:-10250}"
SERVICE_CIDR="10.96.0.0/16"
SERVICE_FIRST_IP="10.96.0.1"
CLUSTER_DNS_IP="10.96.0.10"
POD_CIDR="${GATEHOUSE_CLUSTER_POD_CIDR:-10.244.0.0/24}"
CNI_BRIDGE="gh-cni0"
NODE_NAME="localhost"

export PATH="$BIN:$PATH"

die() { echo "cluster: $*" >&2; exit 1; }
log() { echo "cluster: $*"; }

# Records and checks the version a binary in $BIN was built at.
marker() { echo "$BIN/.versions/$1"; }
have() { # have NAME VERSION — true when $BIN/NAME exists and was built at VERSION
  [ -x "$BIN/$1" ] && [ -f "$(marker "$1")" ] && [ "$(cat "$(marker "$1")")" = "$2" ]
}
mark() { mkdir -p "$BIN/.versions" && echo "$2" >"$(marker "$1")"; }

# Go environment of every build: caches in $CACHE/go so later runs skip the ~20 min cold build.
go_env() {
  command -v go >/dev/null 2>&1 || die "go is not on PATH (install Go >= 1.24: the cluster is built from the Go module proxy)"
  export GOCACHE="$CACHE/go/cache" GOMODCACHE="$CACHE/go/mod" GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local
  mkdir -p "$GOCACHE" "$GOMODCACHE" "$SRC" "$BIN"
}

# pid_alive NAME — true when $PIDS/NAME.pid names a live process.
pid_alive() {
  local f="$PIDS/$1.pid"
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}
