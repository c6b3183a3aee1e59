#!/usr/bin/env bash
# The Gatehouse demo, on two real MCP servers from npm (memory graph and file system):
# an agent snippet reads (observations) and writes (pending actions, one depending on another);
# a person approves some and rejects one; only approved writes change the servers; the dependent
# of the rejected write is cascaded; replay rebuilds the identical log; verify checks the chain.
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1
# Installs what the demo uses and is missing first (a few seconds when nothing is), so a fresh clone needs
# only this; it ends with one line naming what `npm test` will add, when that is still missing.
bash scripts/setup.sh --quiet --for demo

# The ports (DEMO_PORT_BASE: 7101 to 7106 by default, DEMO_WEB_PORT: 8781) are numbers; gatehouse dev checks the range.
for v in DEMO_PORT_BASE DEMO_WEB_PORT; do
  case "${!v:-1}" in *[!0-9]*) echo "demo: $v must be a port number, e.g. $v=7201 (got \"${!v}\")" >&2; exit 2 ;; esac
done
# The demo's own data dir (DEMO_DATA_DIR), never GATEHOUSE_DATA_DIR: the demo starts from nothing, and a
# person's real data must not be wiped because they exported that variable for the CLI. A directory is
# cleared only when the demo made it (its marker file is there) or it is empty.
demo_dir="${DEMO_DATA_DIR:-$PWD/.gatehouse/demo}"
marker="$demo_dir/.gatehouse-demo-data"
if [ -d "$demo_dir" ] && [ ! -f "$marker" ] && [ -n "$(ls -A "$demo_dir")" ]; then
  echo "demo: $demo_dir holds data the demo did not make; it clears its data dir at every run, so it will not use this one. Set DEMO_DATA_DIR to a new or empty directory." >&2
  exit 1
fi
rm -rf "$demo_dir"
mkdir -p "$demo_dir"
touch "$marker"
export GATEHOUSE_DATA_DIR="$demo_dir"
gh() { node apps/cli/bin/gatehouse.js "$@"; }
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let v=JSON.parse(s);for(const k of process.argv[1].split("."))v=v[k];console.log(typeof v==="object"?JSON.stringify(v):v)})' "$1"; }
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "starting gatehouse dev (all services and a Temporal dev server, data in $GATEHOUSE_DATA_DIR)"
# exec: $! is then the node process itself, so the trap below stops it.
(exec node --no-node-snapshot apps/cli/bin/gatehouse.js dev --port-base "${DEMO_PORT_BASE:-7101}" --web-port "${DEMO_WEB_PORT:-8781}" \
  >"$GATEHOUSE_DATA_DIR/dev.log" 2>&1) &
dev_pid=$!
trap 'kill $dev_pid 2>/dev/null; wait $dev_pid 2>/dev/null || true' EXIT
# Until dev.json appears (up to 3 minutes: a first start fetches the MCP servers), or at once when the dev
# process has exited (a port taken, runsc missing): then its log says why.
for _ in $(seq 1 900); do
  [ -f "$GATEHOUSE_DATA_DIR/dev.json" ] && break
  kill -0 "$dev_pid" 2>/dev/null || break
  sleep 0.2
done
if [ ! -f "$GATEHOUSE_DATA_DIR/dev.json" ]; then
  cat "$GATEHOUSE_DATA_DIR/dev.log" >&2
  if kill -0 "$dev_pid" 2>/dev/null; then
    echo "demo: gatehouse dev did not start within 3 minutes (its log is above, and in $GATEHOUSE_DATA_DIR/dev.log)" >&2
  else
    echo "demo: gatehouse dev stopped during start-up (its log is above, and in $GATEHOUSE_DATA_DIR/dev.log)" >&2
  fi
  # dev's own hint names its flags; the demo passes them from its variables.
  if grep -q -- '--port-base\|--web-port' "$GATEHOUSE_DATA_DIR/dev.log"; then
    base="${DEMO_PORT_BASE:-7101}"
    echo "demo: the demo's ports come from DEMO_PORT_BASE (now $base: it uses $base to $((10#$base + 5))) and DEMO_WEB_PORT (now ${DEMO_WEB_PORT:-8781}): set another base, e.g. DEMO_PORT_BASE=$((10#$base + 100)) DEMO_WEB_PORT=$((10#${DEMO_WEB_PORT:-8781} + 100)) npm run demo" >&2
  fi
  exit 1
fi
head -3 "$GATEHOUSE_DATA_DIR/dev.log" | grep -v '^{' || true

step "create a workspace and connect two MCP servers"
# Owned by dev-approver, with the other dev people as members: only a workspace's owner and members
# reach it in the web app (the sign-in links gatehouse dev printed are for these three).
ws=$(gh workspace create --name demo --owner user:dev-approver --member user:dev-auditor --member user:dev-admin)
echo "workspace: $ws"
gh members "$ws"
gh connect "$ws" mcp://memory
gh connect "$ws" mcp://files

step "what the agent is given (the bindings' TypeScript)"
gh bindings "$ws" | head -40
echo "..."

step "run the agent's snippet (examples/demo.ts)"
result=$(gh --json exec "$ws" examples/demo.ts)
echo "$result" | field console
echo "returned: $(echo "$result" | field returnJson)"
ret=$(echo "$result" | field returnJson)
turn=$(echo "$result" | field turnId)
echo "the writes wait for a person, so the agent's turn is suspended: turn $turn"
id_of() { echo "$ret" | field "$1.actionId"; }
entities=$(id_of entities); relation=$(id_of relation); notes=$(id_of notes); draft=$(id_of draft); polish=$(id_of polish)

step "pending actions; nothing has reached the servers yet"
gh actions "$ws" --pending
ls "$GATEHOUSE_DATA_DIR/files"
[ ! -e "$GATEHOUSE_DATA_DIR/files/notes.md" ] && echo "files/notes.md: not written (held for approval)"
[ ! -s "$GATEHOUSE_DATA_DIR/memory.jsonl" ] && echo "memory graph: empty (held for approval)"

# Decisions name a person; a shell without USER (a container, CI) records the demo's own approver.
export GATEHOUSE_USER="${GATEHOUSE_USER:-${USER:-demo-approver}}"

step "approve the relation with the entities it needs, and the notes file; reject the draft"
gh approve "$ws" "$relation" --with-deps
gh approve "$ws" "$notes"
gh reject "$ws" "$draft" --reason "no drafts in the shared folder"

step "the servers changed only for the approved writes"
echo "files/: $(ls "$GATEHOUSE_DATA_DIR/files" | tr '\n' ' ')"
cat "$GATEHOUSE_DATA_DIR/files/notes.md"
[ ! -e "$GATEHOUSE_DATA_DIR/files/draft.md" ] && echo "files/draft.md: absent (rejected)"
echo "memory graph:"; cat "$GATEHOUSE_DATA_DIR/memory.jsonl"; echo

step "the dependent of the rejected write was cascaded"
gh actions "$ws"
status=$(gh --json actions "$ws" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const a=JSON.parse(s).find(x=>x.id==process.argv[1]);console.log(a.status.replace("ACTION_STATUS_","").toLowerCase() + ", cascaded from action " + a.cascadedFrom)})' "$polish")
echo "action $polish: $status"

step "the turn ends once every awaited write is decided (here: completed, since the draft was rejected)"
gh turn "$ws" "$turn" --wait --timeout 30s

step "the agent collects a result (recorded as an observation)"
cat >"$GATEHOUSE_DATA_DIR/collect.ts" <<SNIP
export default async (env: any) => env.MEMORY.getActionResult($entities);
SNIP
gh --json exec "$ws" "$GATEHOUSE_DATA_DIR/collect.ts" | field returnJson

step "the log: observations and actions in one table"
gh log "$ws"

step "replay rebuilds the identical log from the event stream"
gh --json log "$ws" >"$GATEHOUSE_DATA_DIR/live.json"
gh --json replay "$ws" >"$GATEHOUSE_DATA_DIR/replayed.json"
if cmp -s "$GATEHOUSE_DATA_DIR/live.json" "$GATEHOUSE_DATA_DIR/replayed.json"; then
  echo "replay == live projection ($(wc -c <"$GATEHOUSE_DATA_DIR/live.json") bytes, identical)"
else
  echo "replay differs from the live projection!"; diff "$GATEHOUSE_DATA_DIR/live.json" "$GATEHOUSE_DATA_DIR/replayed.json" | head; exit 1
fi

step "verify the hash chain"
gh verify "$ws"
step "the approver web app: one more write waits for a person there"
cat >"$GATEHOUSE_DATA_DIR/pending.ts" <<'SNIP'
export default async (env: any) =>
  env.MEMORY.add_observations({ observations: [{ entityName: "Ada", contents: ["reviewed in the web app"] }] });
SNIP
gh --json exec "$ws" "$GATEHOUSE_DATA_DIR/pending.ts" | field returnJson
gh actions "$ws" --pending
grep -E "approver web app|sign in as" "$GATEHOUSE_DATA_DIR/dev.log"
if [ -t 0 ] && [ -z "${CI:-}" ]; then
  echo
  echo "Open the dev-approver link above in a browser: the inbox shows the pending write; approve or reject it there."
  read -r -p "Press Enter to stop the services... " _
fi
echo
echo "Demo done. The services are stopped; data stays in $GATEHOUSE_DATA_DIR."
echo "To open the web app on this data again: GATEHOUSE_DATA_DIR=$GATEHOUSE_DATA_DIR npm run gatehouse -- dev --port-base ${DEMO_PORT_BASE:-7101} --web-port ${DEMO_WEB_PORT:-8781}"
