#!/usr/bin/env bash
# The one test command (README): installs what is missing first (scripts/setup.sh: a few seconds when nothing
# is), then lint + format checks (biome, buf), typecheck, then every package's node:test suite in turn.
# Prints "N passed, N failed, N todo" at the end (naming each TODO test: known gaps kept visible); exits
# non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1

echo "== setup (installs only what is missing)"
bash scripts/setup.sh --quiet || { echo "setup failed: nothing was tested (run npm run setup to see why)" >&2; exit 1; }

status=0
echo "== lint and format (biome)"
npx biome ci . || status=1
echo "== proto lint and format (buf)"
npx buf lint || status=1
npx buf format --diff --exit-code || status=1
echo "== build and typecheck (turbo)"
npx turbo run typecheck --output-logs=errors-only || status=1
# scripts/ is not a workspace package, so turbo does not typecheck it (the benches and their tests).
npx tsc -p scripts/tsconfig.json || status=1

passed=0
failed=0
todo=0
todos=""
failures=""
# scripts: the set-up step's own tests (not a package: run with node --test directly).
packages=(scripts packages/caller-token packages/gateway-contract packages/apply-protocol packages/service-kit packages/telemetry packages/event-store packages/approval-core packages/agent-core packages/agent-mcp packages/read-model packages/temporal-dev packages/gatekeeper-kit packages/live-notices services/approval services/worker services/gatekeeper-mcp services/gatekeeper-git services/gatekeeper-postgres sandbox-runner services/kernel services/gateway apps/cli deploy loadtests)
# Tests live in <package>/test/ (e2e: one folder per surface). Any other folder with tests runs too (after those), so a new package is never silently left out.
for dir in packages/* services/* web sandbox-runner apps/* e2e bench deploy loadtests; do
  ls "$dir"/*/*.test.ts >/dev/null 2>&1 || continue
  [[ " ${packages[*]} " == *" $dir "* ]] || packages+=("$dir")
done
for pkg in "${packages[@]}"; do
  ls "$pkg"/*/*.test.ts >/dev/null 2>&1 || continue
  echo "== tests: $pkg"
  log=$(mktemp)
  if [ -f "$pkg/package.json" ]; then
    (cd "$pkg" && npm test 2>&1) | tee "$log"
  else
    (cd "$pkg" && node --no-node-snapshot --import tsx --test test/*.test.ts 2>&1) | tee "$log"
  fi
  rc=${PIPESTATUS[0]}
  p=$(grep -E '^# pass [0-9]+' "$log" | tail -1 | awk '{print $3}')
  f=$(grep -E '^# fail [0-9]+' "$log" | tail -1 | awk '{print $3}')
  t=$(grep -E '^# todo [0-9]+' "$log" | tail -1 | awk '{print $3}')
  todo=$((todo + ${t:-0}))
  # Known gaps kept as failing TODO tests: name them, so the summary never hides them.
  todos="${todos}$(grep -E '^ *not ok [0-9]+ - .* # TODO' "$log" | sed -E "s|^ *not ok [0-9]+ - |  ${pkg}: |")"$'\n'
  # Each failing test's name and error (its TAP diagnostic, at most 40 lines), repeated at the end so the
  # last lines of a long run say what failed and why.
  failures="${failures}$(awk -v pkg="$pkg" '
    /^ *not ok [0-9]+ - / && !/# (TODO|SKIP)/ { on = 1; n = 0; sub(/^ *not ok [0-9]+ - /, ""); print "--- " pkg ": " $0; next }
    on && /^ *\.\.\.$/ { on = 0; next }
    on && n < 40 { print; n++ }
  ' "$log")"$'\n'
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [ "$rc" -ne 0 ]; then
    status=1
    if [ "${f:-0}" -eq 0 ]; then
      failed=$((failed + 1))
      failures="${failures}--- ${pkg}: its tests exited ${rc} without a failing test in their report (see the output above)"$'\n'
    fi
  fi
  rm -f "$log"
done
if [ "$todo" -gt 0 ]; then
  echo "known gaps (TODO tests, not counted as failures):"
  printf '%s' "$todos" | grep -v '^$' || true
fi
if [ -n "$(printf '%s' "$failures" | tr -d '\n')" ]; then
  echo "failures (each failing test with its error):"
  printf '%s' "$failures" | grep -v '^$' || true
fi
echo "${passed} passed, ${failed} failed, ${todo} todo"
exit "$status"
