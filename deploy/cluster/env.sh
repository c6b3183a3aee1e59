#!/usr/bin/env bash
# Prints the shell exports for using the local cluster: KUBECONFIG and PATH with $CACHE/bin first
# (kubectl from the system, helm/ctr/etcd from the cache). Use: eval "$(npm run --silent cluster -- env)"
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$#" -eq 0 ] || die "env takes no arguments"
printf 'export KUBECONFIG=%q\n' "$KUBECONFIG_FILE"
printf 'export PATH=%q:"$PATH"\n' "$BIN"
