# Shared paths and helpers for deploy/cluster/*.sh (sourced, not run).
#
# Layout (agreed between the cluster, chart and images scripts — keep it):
#   CACHE=${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse}/cluster
#   $CACHE/bin/          built and extracted binaries (+ cni/ plugins, .versions/ markers)
#   ${CACHE%/cluster}/go/{cache,mod}  GOCACHE and GOMODCACHE, shared with every Go build of the set-up
#                        (scripts/go-cache.sh; a machine set up before moves its old $CACHE/go there)
#   $CACHE/src/          wrapper modules (one folder per build)
#   $CACHE/run/          runtime state: pki/, etcd/, containerd/, kubelet/, logs/, pids/, kubeconfig
# shellcheck disable=SC2034
CLUSTER_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.sh
. "$CLUSTER_DIR/versions.sh"
# shellcheck source=../../scripts/go-cache.sh
. "$CLUSTER_DIR/../../scripts/go-cache.sh"

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
CONTROLLER_MANAGER_PORT="${GATEHOUSE_CLUSTER_CONTROLLER_MANAGER_PORT:-10257}"
SCHEDULER_PORT="${GATEHOUSE_CLUSTER_SCHEDULER_PORT:-10259}"
KUBE_PROXY_METRICS_PORT="${GATEHOUSE_CLUSTER_KUBE_PROXY_METRICS_PORT:-10249}"
KUBE_PROXY_HEALTHZ_PORT="${GATEHOUSE_CLUSTER_KUBE_PROXY_HEALTHZ_PORT:-10256}"
SERVICE_CIDR="10.96.0.0/16"
SERVICE_FIRST_IP="10.96.0.1"
CLUSTER_DNS_IP="10.96.0.10"
POD_CIDR="${GATEHOUSE_CLUSTER_POD_CIDR:-10.244.0.0/24}"
CNI_BRIDGE="gh-cni0"
KUBELET_HEALTHZ_PORT="${GATEHOUSE_CLUSTER_KUBELET_HEALTHZ_PORT:-10248}"
PAUSE_IMAGE="gatehouse.local/pause:3.10"
COREDNS_IMAGE="gatehouse.local/coredns:${COREDNS_VERSION#v}"
BUSYBOX_IMAGE="gatehouse.local/busybox:1.35"
PROVISIONER_IMAGE="gatehouse.local/local-path-provisioner:${LOCAL_PATH_PROVISIONER_VERSION#v}"
# Where the default StorageClass (manifests/local-path.yaml) makes its volumes; down deletes it.
STORAGE_DIR="$RUN/local-path"
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

# need_build VERSION NAME... — sets todo=(the NAMEs not built at VERSION). Ends the calling build script
# when there is nothing to do (exit 0), and in build.sh --check mode when something is missing (exit 1).
need_build() {
  local ver="$1" c; shift
  todo=()
  for c in "$@"; do have "$c" "$ver" || todo+=("$c"); done
  [ "${#todo[@]}" -gt 0 ] || exit 0
  [ -z "${CLUSTER_CHECK:-}" ] || exit 1
}

# module_field MODULE@VERSION Dir|GoMod — downloads the module from the Go proxy and prints where
# `go mod download -json` put its source tree (Dir) or its go.mod (GoMod). On failure prints go's error
# (which -json writes to stdout) to stderr and returns 1.
module_field() {
  local out
  if ! out="$(go mod download -json "$1")"; then
    echo "cluster: go mod download $1 failed: $(printf '%s\n' "$out" | sed -n 's/^\t"Error": "\(.*\)",\{0,1\}$/\1/p')" >&2
    return 1
  fi
  printf '%s\n' "$out" | sed -n "s/^\t\"$2\": \"\(.*\)\",\$/\1/p"
}

# go_build_bin NAME VERSION DIR PACKAGE [go build flags...] — a static, trimmed `go build -p 2` of
# PACKAGE in module DIR into $BIN/NAME (written aside, then moved in place), marked as built at VERSION.
go_build_bin() {
  local name="$1" ver="$2" dir="$3" package="$4" start=$SECONDS; shift 4
  (cd "$dir" && CGO_ENABLED=0 go build -p 2 -trimpath "$@" -o "$BIN/$name.tmp" "$package") \
    || die "building $name $ver failed (see above)"
  mv "$BIN/$name.tmp" "$BIN/$name" && mark "$name" "$ver"
  log "built $name in $((SECONDS - start)) s"
}

# Go environment of every build: the set-up's shared Go caches (scripts/go-cache.sh), so later runs skip
# the ~20 min cold build and dependencies shared with the other Go builds compile once.
go_env() {
  gatehouse_go_env || die "go is not on PATH (install Go >= 1.24: the cluster is built from the Go module proxy)"
  mkdir -p "$SRC" "$BIN"
}

# pid_alive NAME — true when $PIDS/NAME.pid names a live process.
pid_alive() {
  local f="$PIDS/$1.pid"
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

# component list, in start order (down stops them in reverse). kube-network-policies is started and
# stopped by netpol.sh (it must get SIGINT to remove its nftables table).
COMPONENTS=(etcd kube-apiserver containerd kube-controller-manager kube-scheduler kubelet kube-proxy)

# start_proc NAME CMD... — starts CMD in its own session (setsid: down kills the whole group), output
# appended to $LOGS/NAME.log, pid in $PIDS/NAME.pid.
start_proc() {
  local name="$1"; shift
  mkdir -p "$LOGS" "$PIDS"
  echo "=== $(date -u +%FT%TZ) starting: $*" >>"$LOGS/$name.log"
  # fds 8 and 9 hold the build and up/down locks: the component must not keep them
  setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null 8>&- 9>&- &
  echo "$!" >"$PIDS/$name.pid"
}

# wait_until DESCRIPTION SECONDS NAME CMD... — polls CMD every 0.5 s until it succeeds; fails naming
# DESCRIPTION and the tail of NAME's log when SECONDS pass or NAME's process exits.
wait_until() {
  local what="$1" secs="$2" name="$3"; shift 3
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if [ -n "$name" ] && ! pid_alive "$name"; then
      tail -n 20 "$LOGS/$name.log" >&2 || true
      die "$name exited while waiting for $what (log: $LOGS/$name.log, last lines above)"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      [ -z "$name" ] || tail -n 20 "$LOGS/$name.log" >&2 || true
      die "timed out after ${secs}s waiting for $what${name:+ (log: $LOGS/$name.log)}"
    fi
    sleep 0.5
  done
}

# port_free PORT NAME — fails naming the process that holds 127.0.0.1/0.0.0.0:PORT (needed by NAME).
port_free() {
  local holder
  holder="$(ss -Hltnp "sport = :$1" 2>/dev/null | head -1)"
  [ -z "$holder" ] && return 0
  die "port $1 (for $2) is taken: $(echo "$holder" | sed -n 's/.*users:((\(.*\)))$/\1/p') — stop it, or set the port variable for $2 (docs/cluster.md)"
}

# kubectl with the admin kubeconfig
k() { kubectl --kubeconfig="$KUBECONFIG_FILE" "$@"; }
readyz() { curl -fsS --max-time 3 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "https://127.0.0.1:$APISERVER_PORT/readyz" >/dev/null; }

# build_lock NAME — one build of NAME at a time on this machine (a second waits, then finds it built).
build_lock() {
  mkdir -p "$SRC"
  exec 8>"$SRC/.build-$1.lock"
  flock 8
}
