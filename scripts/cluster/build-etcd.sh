#!/usr/bin/env bash
# Builds etcd $ETCD_VERSION into $CACHE/bin/etcd when missing (~1 min cold). `go install` of etcd is
# refused (its go.mod has replace directives), so a wrapper module in $CACHE/src requires
# go.etcd.io/etcd/server/v3 and its main calls etcdmain.Main, as etcd's own main does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -n "${CLUSTER_CHECK:-}" ] || build_lock etcd
go_env
have etcd "$ETCD_VERSION" && exit 0
[ -z "${CLUSTER_CHECK:-}" ] || exit 1   # build.sh --check: missing

mod="$SRC/etcd-$ETCD_VERSION"
log "building etcd $ETCD_VERSION (~1 min cold)"
start=$SECONDS
if [ ! -f "$mod/go.sum" ]; then
  rm -rf "$mod" && mkdir -p "$mod"
  cat >"$mod/go.mod" <<GOMOD
module gatehouse.local/cluster/etcd

go 1.24

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
GOMOD
  cat >"$mod/main.go" <<'GO'
// Command etcd is etcd's server, built from the published go.etcd.io/etcd/server/v3 module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  (cd "$mod" && go mod tidy) || die "go mod tidy failed in $mod (see above); delete $mod to retry"
fi
(cd "$mod" && CGO_ENABLED=0 go build -p 2 -trimpath -ldflags "-s -w" -o "$BIN/etcd.tmp" .) || die "building etcd $ETCD_VERSION failed (see above)"
mv "$BIN/etcd.tmp" "$BIN/etcd" && mark etcd "$ETCD_VERSION"
log "built etcd in $((SECONDS - start)) s"
