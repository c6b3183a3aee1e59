#!/usr/bin/env bash
# `npm run cluster -- COMMAND`: a local Kubernetes cluster on loopback whose node runs Pods under gVisor.
#   up      build what is missing (build.sh), then start what is down and wait until it is Ready
#   down    stop everything up started, remove its mounts, bridge, iptables rules and cgroups
#   status  each component up/down with its pid, the node's readiness, the kubeconfig path
#   env     print the shell exports to use it: eval "$(npm run --silent cluster -- env)"
#   build [GROUP...]  only build (see build.sh)
# Everything lives under ${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/gatehouse}/cluster (docs/cluster.md).
set -euo pipefail
here="$(dirname "$0")"
cmd="${1:-}"
[ "$#" -eq 0 ] || shift
case "$cmd" in
  up|down|status|env|build) exec bash "$here/$cmd.sh" "$@" ;;
  ""|-h|--help|help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; [ -n "$cmd" ] || exit 2 ;;
  *) echo "cluster: unknown command '$cmd' (one of: up, down, status, env, build)" >&2; exit 2 ;;
esac
