#!/usr/bin/env bash
# Loads the cluster's own images into the node's containerd when missing, each built by image.sh from
# a rootfs holding one static binary: `pause` (the Pod sandbox image, gatehouse.local/pause:3.10),
# `coredns` (gatehouse.local/coredns:<version>, uid 65532) and `busybox` (gatehouse.local/busybox:<version>,
# Debian's static busybox with its applets linked in /bin and a /tmp, uid 65534, command sh: for tests
# and helm test hooks) and `local-path-provisioner` (gatehouse.local/local-path-provisioner:<version>, uid
# 65534: the default StorageClass). Usage: images.sh pause|coredns|busybox|local-path-provisioner...
set -euo pipefail
here="$(dirname "$0")"
. "$here/lib.sh"
for name in "$@"; do
  case "$name" in
    pause) ref="$PAUSE_IMAGE" bin=pause user=65535:65535 ;;
    coredns) ref="$COREDNS_IMAGE" bin=coredns user=65532:65532 ;;
    busybox) ref="$BUSYBOX_IMAGE" bin=bin/busybox user=65534:65534 ;;
    local-path-provisioner) ref="$PROVISIONER_IMAGE" bin=local-path-provisioner user=65534:65534 ;;
    *) die "images.sh: unknown image $name (pause, coredns, busybox or local-path-provisioner)" ;;
  esac
  grep -qxF "$ref" <<<"$(ctr --address "$RUN/containerd/containerd.sock" -n k8s.io images ls -q)" && continue
  rootfs="$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-rootfs.XXXXXX")"
  args=(--entrypoint "/$bin")
  if [ "$name" = busybox ]; then
    mkdir -p "$rootfs/bin" "$rootfs/tmp" && chmod 1777 "$rootfs/tmp"
    install -m 0755 "$BIN/busybox" "$rootfs/bin/busybox"
    for applet in $("$BIN/busybox" --list); do [ -e "$rootfs/bin/$applet" ] || ln -s busybox "$rootfs/bin/$applet"; done
    args=(--cmd /bin/sh --env PATH=/bin)
  else
    install -m 0755 "$BIN/$(basename "$bin")" "$rootfs/$bin"
  fi
  bash "$here/image.sh" --ref "$ref" --rootfs "$rootfs" "${args[@]}" --user "$user" >/dev/null \
    || { rm -rf "$rootfs"; die "building the $name image failed (see above)"; }
  rm -rf "$rootfs"
  log "$name: image $ref loaded"
done
