#!/usr/bin/env bash
# Extracts runc, the CNI plugins and a static busybox (the tests' and helm tests' small image) from
# Debian's packages into $CACHE/bin (runc, busybox, cni/{bridge,host-local,loopback,portmap,...}) with `apt-get download` + `dpkg-deb -x`: nothing is installed, no
# service starts. Also installs the host tools kube-proxy and the CNI plugins call when they are
# missing (iptables, nftables, conntrack) — those need a real install (alternatives, shared libraries).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -n "${CLUSTER_CHECK:-}" ] || build_lock debian
mkdir -p "$BIN" "$SRC"

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
host=()
command -v iptables >/dev/null 2>&1 || host+=(iptables)
command -v nft >/dev/null 2>&1 || host+=(nftables)
command -v conntrack >/dev/null 2>&1 || host+=(conntrack)
if [ "${#host[@]}" -gt 0 ]; then
  [ -z "${CLUSTER_CHECK:-}" ] || exit 1   # build.sh --check: missing
  command -v apt-get >/dev/null 2>&1 || die "missing ${host[*]} and no apt-get here: install them by hand"
  log "installing Debian packages: ${host[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${host[@]}" >/dev/null \
    || { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${host[@]}" >/dev/null; } \
    || die "apt-get install ${host[*]} failed (see above)"
fi

# Extracted once: a present binary with its marker is kept (apt-cache is slow; delete
# $CACHE/bin/.versions/<name> to extract the release's current version again).
for p in $DEBIAN_PACKAGES; do
  case "$p" in runc) name=runc ;; containernetworking-plugins) name=cni ;; busybox-static) name=busybox ;; *) die "no extraction rule for $p" ;; esac
  if [ "$name" = cni ]; then [ -x "$BIN/cni/bridge" ] && [ -f "$(marker cni)" ] && continue
  else [ -x "$BIN/$name" ] && [ -f "$(marker "$name")" ] && continue; fi
  command -v apt-cache >/dev/null 2>&1 || die "apt-cache missing: runc and the CNI plugins are extracted from Debian packages"
  ver="$(apt-cache policy "$p" | sed -n 's/^  Candidate: //p')"
  [ -n "$ver" ] && [ "$ver" != "(none)" ] || die "Debian package $p is not available (run apt-get update?)"
  [ -z "${CLUSTER_CHECK:-}" ] || exit 1   # build.sh --check: missing
  log "extracting $p $ver from Debian (seconds)"
  work="$SRC/debian/$p"
  rm -rf "$work" && mkdir -p "$work/root"
  (cd "$work" && apt-get download -qq "$p=$ver" 2> >(grep -v 'unsandboxed as root' >&2)) || die "apt-get download $p=$ver failed (see above)"
  dpkg-deb -x "$work"/*.deb "$work/root"
  if [ "$name" = runc ]; then
    install -m 0755 "$work/root/usr/sbin/runc" "$BIN/runc"
  elif [ "$name" = busybox ]; then
    install -m 0755 "$work/root/bin/busybox" "$BIN/busybox"
  else
    rm -rf "$BIN/cni" && mkdir -p "$BIN/cni" && cp -a "$work/root/usr/lib/cni/." "$BIN/cni/"
    [ -x "$BIN/cni/bridge" ] || die "$p $ver has no usr/lib/cni/bridge"
  fi
  mark "$name" "$ver"
done
