#!/usr/bin/env bash
# Builds sigs.k8s.io/kube-network-policies (the SIG's NetworkPolicy agent that kind ships) into
# $CACHE/bin/kube-network-policies when missing or at another version than versions.sh pins. The
# bridge CNI does not enforce NetworkPolicy; this agent does, from the host (netpol.sh starts it).
#
# Patched: the agent sends packets to its nfqueue with nftables' native `queue` expression, which
# needs CONFIG_NFT_QUEUE; these VMs' kernels lack it (and load no modules), so the rule is refused
# ("netlink receive: no such file or directory", `nft add rule … queue num 100` fails the same way).
# The kernel has nft_compat and xt_NFQUEUE (CONFIG_NFT_COMPAT, CONFIG_NETFILTER_XT_TARGET_NFQUEUE),
# so a copy of the module ($CACHE/src/kube-network-policies-<version>-patched) queues with the xt
# NFQUEUE target (revision 3: queue number, one queue, bypass flag when --fail-open) instead — the
# same verdicts from the same queue. The copy also adds an `input` chain queueing new connections from
# policy-selected Pods to the node's own addresses (upstream filters only at postrouting, which locally
# delivered traffic never passes: a default-deny Pod could reach the API server on the node).
# It is built as its own main module (its main package is cmd/).
# It talks to nftables over netlink: no nft binary at run time (build-debian.sh installs nft for
# inspecting its table).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
name=kube-network-policies
ver="$KUBE_NETWORK_POLICIES_VERSION"
go_env
need_build "$ver+xtqueue+input" "$name"
log "building $name $ver (~3 min cold)"
patched="$SRC/$name-$ver-patched"
# A copy without go.mod is an interrupted one (a cold run once left only the folders): copy again.
if [ ! -f "$patched/.patched" ] || [ ! -f "$patched/go.mod" ]; then
  orig="$(cd "$SRC" && module_field "sigs.k8s.io/kube-network-policies@$ver" Dir)"
  [ -f "$orig/go.mod" ] || die "could not download sigs.k8s.io/kube-network-policies@$ver from the Go proxy (no go.mod in '$orig')"
  rm -rf "$patched"
  cp -r "$orig" "$patched"
  chmod -R u+w "$patched"
  [ -f "$patched/go.mod" ] || die "copying $orig to $patched left no go.mod: remove $patched and run again"
  f="$patched/pkg/networkpolicy/controller.go"
  perl -0pi -e 's/queue := &expr\.Queue\{Num: uint16\(c\.config\.QueueID\)\}\n\tif c\.config\.FailOpen \{\n\t\tqueue\.Flag = expr\.QueueFlagBypass\n\t\}/queue := xtNFQueue(uint16(c.config.QueueID), c.config.FailOpen)/g' "$f"
  perl -0pi -e 's/(\n\tif c\.config\.NetfilterBug1766Fix \{\n\t\tc\.addDNSRacersWorkaroundRules\(nft, table\))/\n\tif !c.config.AdminNetworkPolicy && !c.config.BaselineAdminNetworkPolicy {\n\t\taddHostInputRules(nft, table, queue)\n\t}\n$1/' "$f"
  [ "$(grep -c 'xtNFQueue(' "$f")" = 2 ] && ! grep -q 'expr\.Queue{' "$f" && grep -q 'addHostInputRules(nft' "$f" \
    || die "the queue patch no longer applies to $f ($name $ver changed it): update build-netpol.sh"
  cat >"$patched/pkg/networkpolicy/xtqueue.go" <<'GO'
package networkpolicy

import (
	"encoding/binary"

	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"
)

// xtNFQueue is the iptables NFQUEUE target (revision 3) as an nftables expression through
// nft_compat, for kernels built without CONFIG_NFT_QUEUE. Its info is struct xt_NFQ_info_v3
// {queuenum, queues_total, flags uint16} in host byte order, padded to 8 bytes (XT_ALIGN).
func xtNFQueue(num uint16, bypass bool) expr.Any {
	info := make(xt.Unknown, 8)
	binary.NativeEndian.PutUint16(info[0:], num)
	binary.NativeEndian.PutUint16(info[2:], 1)
	if bypass {
		binary.NativeEndian.PutUint16(info[4:], 1) // NFQ_FLAG_BYPASS
	}
	return &expr.Target{Name: "NFQUEUE", Rev: 3, Info: &info}
}
GO
  cat >"$patched/pkg/networkpolicy/hostinput.go" <<'GO'
package networkpolicy

import (
	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// addHostInputRules queues new connections from policy-selected local Pods to the node's own
// addresses (input hook) too: those are delivered locally and never pass the postrouting hook, so
// without this an egress policy does not cover e.g. an API server listening on the node.
func addHostInputRules(nft *nftables.Conn, table *nftables.Table, queue expr.Any) {
	chain := nft.AddChain(&nftables.Chain{
		Name:     "input",
		Table:    table,
		Type:     nftables.ChainTypeFilter,
		Hooknum:  nftables.ChainHookInput,
		Priority: nftables.ChainPriorityFilter,
	})
	nft.AddRule(&nftables.Rule{Table: table, Chain: chain, Exprs: []expr.Any{
		&expr.Ct{Register: 0x1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 0x1, DestRegister: 0x1, Len: 0x4, Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED), Xor: []byte{0x0, 0x0, 0x0, 0x0}},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 0x1, Data: []byte{0x0, 0x0, 0x0, 0x0}},
		&expr.Verdict{Kind: expr.VerdictAccept},
	}})
	nft.AddRule(&nftables.Rule{Table: table, Chain: chain, Exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 0x1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 0x1, Data: []uint8{unix.NFPROTO_IPV4}},
		&expr.Payload{DestRegister: 0x1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
		&expr.Lookup{SourceRegister: 0x1, SetName: podV4IPsSet},
		queue,
	}})
	nft.AddRule(&nftables.Rule{Table: table, Chain: chain, Exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 0x1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 0x1, Data: []uint8{unix.NFPROTO_IPV6}},
		&expr.Payload{DestRegister: 0x1, Base: expr.PayloadBaseNetworkHeader, Offset: 8, Len: 16},
		&expr.Lookup{SourceRegister: 0x1, SetName: podV6IPsSet},
		queue,
	}})
}
GO
  touch "$patched/.patched"
fi
go_build_bin "$name" "$ver+xtqueue+input" "$patched" ./cmd -ldflags "-s -w"
