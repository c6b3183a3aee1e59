#!/usr/bin/env bash
# The one test command (README): installs what is missing first (scripts/setup.sh: a few seconds when nothing
# is), then runs the checks (biome, buf, typecheck) and every package's node:test suites a few at a time
# (scripts/test-run.ts: its usage names the options). Arguments select units, e.g.
#   npm test -- services/approval e2e/web     npm run test:changed     GATEHOUSE_TEST_JOBS=1 npm test
# Prints where the time went, the slowest tests, the known gaps and "N passed, N failed, N todo" at the
# end; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1

echo "== setup (installs only what is missing)"
start=$SECONDS
bash scripts/setup.sh --quiet || { echo "setup failed: nothing was tested (run npm run setup to see why)" >&2; exit 1; }
export GATEHOUSE_TEST_SETUP_SECONDS=$((SECONDS - start))
exec node --import tsx scripts/test-run.ts "$@"
