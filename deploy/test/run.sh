#!/usr/bin/env bash
# deploy's `npm test`: the chart's cluster tests share one local cluster instead of each test file bringing
# one up and taking it down (up ~12 s, down ~50 s on 2 idle cores, paid once instead of six times).
#   1. every test file but local-cluster.test.ts, on a cluster this script brings up when none is running
#      (each file's ensureCluster then reuses it and leaves it running);
#   2. that cluster taken down again (only when this script brought it up; also on Ctrl-C or a failure);
#   3. local-cluster.test.ts on its own: it tests up, a second up and down themselves, so it starts from none.
# Exits non-zero when either test run fails.
set -uo pipefail
cd "$(dirname "$0")/.."
node_test=(node --no-node-snapshot --import tsx --test --test-concurrency=1)

started=""
down() {
  if [ -n "$started" ]; then
    started=""
    npm run --silent --prefix .. cluster -- down >/dev/null || echo "deploy tests: npm run cluster -- down failed" >&2
  fi
}
trap down EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! npm run --silent --prefix .. cluster -- status >/dev/null 2>&1; then
  # When up fails, the files still run: the render tests need no cluster, and each cluster test's own
  # ensureCluster tries up again and fails naming what up printed.
  if npm run --silent --prefix .. cluster -- up; then started=1; else echo "deploy tests: npm run cluster -- up failed (above)" >&2; fi
fi
files=()
for f in test/*.test.ts; do [ "$f" = test/local-cluster.test.ts ] || files+=("$f"); done
"${node_test[@]}" "${files[@]}"
first=$?
down
"${node_test[@]}" test/local-cluster.test.ts
second=$?
[ "$first" -eq 0 ] && [ "$second" -eq 0 ]
