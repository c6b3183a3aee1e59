# One Go build cache and module cache for every Go build of the set-up (sourced, not run): the Temporal
# CLI (scripts/setup.sh), the local cluster's binaries (deploy/cluster/build*.sh), promtool, Jaeger and the
# monitoring CRDs' controller-gen (scripts/build-*.sh). Shared dependencies (the Go standard library,
# gRPC, OpenTelemetry, the Kubernetes client libraries...) then download and compile once.
#   ${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/gatehouse}/go/cache   GOCACHE
#   ${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/gatehouse}/go/mod     GOMODCACHE
# A machine set up before this layout kept the cluster's caches in .../gatehouse/cluster/go (the biggest
# ones): the first call moves that folder here (a rename, instant), so nothing is rebuilt.
# shellcheck disable=SC2034

GATEHOUSE_CACHE="${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse}"
GATEHOUSE_GO="$GATEHOUSE_CACHE/go"

# gatehouse_go_env — puts Go on PATH (also from /usr/local/go/bin), exports GOCACHE, GOMODCACHE, GOFLAGS
# and GOTOOLCHAIN=local for the shared caches, and creates them. Returns 1 (printing nothing) when Go is
# not installed: the caller says what it needed Go for.
gatehouse_go_env() {
  if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH="$PATH:/usr/local/go/bin"; fi
  command -v go >/dev/null 2>&1 || return 1
  if [ ! -d "$GATEHOUSE_GO" ] && [ -d "$GATEHOUSE_CACHE/cluster/go" ]; then
    mv -T "$GATEHOUSE_CACHE/cluster/go" "$GATEHOUSE_GO" 2>/dev/null || true
  fi
  export GOCACHE="$GATEHOUSE_GO/cache" GOMODCACHE="$GATEHOUSE_GO/mod" GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local
  mkdir -p "$GOCACHE" "$GOMODCACHE"
}
