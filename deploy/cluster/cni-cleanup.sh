#!/usr/bin/env bash
# Removes what the bridge CNI (network "gatehouse") left on the host when Pods were not torn down
# through CNI DEL: the iptables rules that carry its comment (`name: "gatehouse" id: "…"`, the bridge
# plugin's masquerade and portmap's per-Pod rules), the CNI-* chains those emptied, the veths still on
# the bridge, and the bridge itself. Called by down.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v iptables-save >/dev/null 2>&1 || exit 0
for table in nat filter; do
  # delete every rule carrying the network's comment (its save line with -A turned into -D)
  rules="$(iptables-save -t "$table" | grep -F 'name: \"gatehouse\"' | sed 's/^-A /-D /')" || true
  while read -r rule; do
    [ -z "$rule" ] || eval "iptables -w -t $table $rule" 2>/dev/null || true
  done <<<"$rules"
  # drop the per-Pod CNI chains now empty and unreferenced (CNI-<hash>, CNI-DN-<hash>)
  for chain in $(iptables-save -t "$table" | sed -n 's/^:\(CNI-\(DN-\)\{0,1\}[0-9a-f]\{21,24\}\) .*/\1/p'); do
    iptables -w -t "$table" -F "$chain" 2>/dev/null || true
    iptables-save -t "$table" | grep -q -- "-j $chain\( \|$\)" || iptables -w -t "$table" -X "$chain" 2>/dev/null || true
  done
done
if ip link show "$CNI_BRIDGE" >/dev/null 2>&1; then
  for veth in $(ip -o link show master "$CNI_BRIDGE" | awk -F': ' '{print $2}' | cut -d@ -f1); do ip link del "$veth" 2>/dev/null || true; done
  ip link del "$CNI_BRIDGE"
fi
