#!/usr/bin/env bash
# Builds etcd $ETCD_VERSION into $CACHE/bin/etcd when missing (~1 min cold). `go install` of etcd is
# refused (its go.mod has replace directives), so a wrapper module in $CACHE/src requires
# go.etcd.io/etcd/server/v3 and its main calls etcdmain.Main, as etcd's own main does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -n "${CLUSTER_CHECK:-}" ] || build_lock etcd
go_env
need_build "$ETCD_VERSION" etcd

mod="$SRC/etcd-$ETCD_VERSION"
log "building etcd $ETCD_VERSION (~1 min cold)"
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
go_build_bin etcd "$ETCD_VERSION" "$mod" . -ldflags "-s -w"
