#!/usr/bin/env bash
# image.sh — the ONE way Gatehouse builds container images and loads them into the local cluster's
# containerd, without a registry or a Docker engine. Stable interface (the chart and images scripts
# call it):
#
#   deploy/cluster/image.sh --ref REF --rootfs DIR [options]
#
#   --ref REF          full image name with a registry domain, e.g. gatehouse.local/pause:3.10
#                      (Pods then use `image: REF` with `imagePullPolicy: Never`)
#   --rootfs DIR       a directory holding the image's whole file system (one layer, owners kept)
#   --entrypoint ARG   entrypoint, one flag per argument (repeat: --entrypoint /bin/x --entrypoint -v)
#   --cmd ARG          default arguments, one flag per argument (repeatable)
#   --user UID[:GID]   user the process runs as (default 65534:65534, nobody)
#   --env KEY=VALUE    environment variable (repeatable)
#   --workdir DIR      working directory (default /)
#   --label KEY=VALUE  image label (repeatable)
#   --out FILE         where the OCI archive is written (default $CACHE/images/<name>_<tag>.tar)
#   --no-import        only write the archive (no containerd needed)
#   --namespace NS     containerd namespace to import into (default k8s.io, the one the kubelet uses)
#
# How: umoci (built by build.sh) makes an OCI image layout (`umoci init`, `new`, `insert` the rootfs as
# one layer, `config` for entrypoint/user/env/workdir), its index gets the containerd name annotation
# (io.containerd.image.name = REF, next to OCI's org.opencontainers.image.ref.name = tag), the layout is
# tarred into an OCI archive, and `ctr -n NS images import` loads it into the cluster's containerd
# (socket $CACHE/run/containerd/containerd.sock; the cluster must be up unless --no-import).
# Prints the archive path and the imported name. Exit 2 on bad arguments, 1 on failures.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
bad() { echo "image.sh: $*" >&2; echo "image.sh: run with --help for the flags" >&2; exit 2; }

ref="" rootfs="" user="65534:65534" workdir="/" out="" import=1 ns="k8s.io"
entrypoint=() cmd=() envs=() labels=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --help|-h) usage ;;
    --no-import) import=0; shift; continue ;;
    --ref|--rootfs|--entrypoint|--cmd|--user|--env|--workdir|--label|--out|--namespace)
      [ "$#" -ge 2 ] || bad "$1 needs a value" ;;
    *) bad "unknown argument $1" ;;
  esac
  case "$1" in
    --ref) ref="$2" ;; --rootfs) rootfs="$2" ;; --user) user="$2" ;; --workdir) workdir="$2" ;;
    --out) out="$2" ;; --namespace) ns="$2" ;;
    --entrypoint) entrypoint+=("$2") ;; --cmd) cmd+=("$2") ;;
    --env) [[ "$2" == *=* ]] || bad "--env $2: expected KEY=VALUE"; envs+=("$2") ;;
    --label) [[ "$2" == *=* ]] || bad "--label $2: expected KEY=VALUE"; labels+=("$2") ;;
  esac
  shift 2
done
[ -n "$ref" ] || bad "--ref is required (e.g. --ref gatehouse.local/pause:3.10)"
[[ "$ref" =~ ^([a-z0-9.-]+\.[a-z0-9-]+(:[0-9]+)?)/([a-z0-9._/-]+):([A-Za-z0-9_][A-Za-z0-9._-]{0,127})$ ]] \
  || bad "--ref $ref: expected DOMAIN/NAME:TAG with a dotted domain, lower-case name and a tag (e.g. gatehouse.local/pause:3.10)"
tag="${BASH_REMATCH[4]}"
name="${ref%:*}"
[ -n "$rootfs" ] || bad "--rootfs is required (a directory holding the image's file system)"
[ -d "$rootfs" ] || bad "--rootfs $rootfs: no such directory"
[[ "$user" =~ ^[0-9]+(:[0-9]+)?$ ]] || bad "--user $user: expected a numeric UID or UID:GID (e.g. 65534:65534)"
[[ "$workdir" == /* ]] || bad "--workdir $workdir: expected an absolute path"
[ -x "$BIN/umoci" ] || die "umoci is missing from $BIN: run deploy/cluster/build.sh (or npm run cluster -- up)"

[ -n "$out" ] || out="$CACHE/images/$(echo "$name" | tr '/:' '__')_$tag.tar"
mkdir -p "$(dirname "$out")"
work="$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-image.XXXXXX")"
trap 'rm -rf "$work"' EXIT
layout="$work/oci"

umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci insert --image "$layout:$tag" "$rootfs" / >/dev/null
args=(--image "$layout:$tag" --os linux --architecture amd64 --config.user "$user" --config.workingdir "$workdir")
if [ "${#entrypoint[@]}" -gt 0 ]; then for a in "${entrypoint[@]}"; do args+=(--config.entrypoint "$a"); done; else args+=(--clear config.entrypoint); fi
if [ "${#cmd[@]}" -gt 0 ]; then for a in "${cmd[@]}"; do args+=(--config.cmd "$a"); done; else args+=(--clear config.cmd); fi
if [ "${#envs[@]}" -gt 0 ]; then for e in "${envs[@]}"; do args+=(--config.env "$e"); done; fi
if [ "${#labels[@]}" -gt 0 ]; then for l in "${labels[@]}"; do args+=(--config.label "$l"); done; fi
umoci config "${args[@]}"
umoci gc --layout "$layout"

# containerd names an imported image by io.containerd.image.name (OCI's ref.name holds the tag only).
jq --arg name "$ref" --arg tag "$tag" \
  '.manifests |= map(if .annotations["org.opencontainers.image.ref.name"] == $tag
                     then .annotations["io.containerd.image.name"] = $name else . end)' \
  "$layout/index.json" >"$work/index.json" && mv "$work/index.json" "$layout/index.json"
tar -C "$layout" -cf "$out.tmp" . && mv "$out.tmp" "$out"
echo "image.sh: wrote $out"

if [ "$import" = 1 ]; then
  sock="$RUN/containerd/containerd.sock"
  [ -S "$sock" ] || die "containerd is not running ($sock missing): start the cluster with npm run cluster -- up, or pass --no-import"
  ctr --address "$sock" -n "$ns" images import --local "$out" >/dev/null \
    || die "ctr images import of $out failed (see above)"
  # The listing is read whole before grep: `ctr … | grep -q` under pipefail fails when grep exits at the
  # first match and ctr, still writing, dies of SIGPIPE.
  listed="$(ctr --address "$sock" -n "$ns" images ls -q)"
  grep -qxF "$ref" <<<"$listed" \
    || die "ctr imported $out but no image named $ref is in namespace $ns"
  echo "image.sh: imported $ref into containerd namespace $ns"
fi
