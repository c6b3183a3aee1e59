/**
 * `npm run bench` (last part), `npm run bench:apply-run`: batch apply through the gatekeeper
 * contract. N approved writes through one Gatekeeper.ApplyActions run vs the same N through N
 * ApplyAction calls, one after another, in the same run, over real gRPC on loopback:
 *
 *  - git: N commits on one branch of a local repository (distinct files; a fresh copy of the same
 *    repository for each side): the run writes them with one ref update, the calls with N.
 *  - mcp: N create_entities on the real memory MCP server (stdio, one pooled session for both).
 *
 * Prints a table and writes bench-results/apply-run.json. Env: BENCH_APPLY_RUN (N, default 200).
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { startGitGatekeeper } from "@gatehouse/gatekeeper-git";
import { readApplyOutcome } from "@gatehouse/gatekeeper-kit";
import { createRegistry, startMcpGatekeeper } from "@gatehouse/gatekeeper-mcp";
import { type ApplyActionsProgress, GatekeeperClient, type RunAction } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import { pino } from "pino";
import { envInt, log, printTable, type Row, round } from "./support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const N = envInt("BENCH_APPLY_RUN", 200);
const logger = pino({ level: "silent" });
// Neither side asks the approval service anything while applying; sessions are not opened.
const NO_APPROVAL = "127.0.0.1:9";

interface Side {
  url: string;
  binding: string;
  trust: string;
  actions: RunAction[];
}

/** N ApplyAction calls, one after another; ms for all. @throws when one does not apply. */
async function oneByOne(client: GatekeeperClient, side: Side): Promise<number> {
  const began = performance.now();
  for (const a of side.actions) {
    const res = await readApplyOutcome(
      client.applyAction({
        workspaceId: "ws-bench",
        binding: side.binding,
        url: side.url,
        trust: side.trust,
        ...a,
      }),
    );
    if (!res.ok) throw new Error(`ApplyAction of ${a.actionId} failed: ${res.error}`);
  }
  return performance.now() - began;
}

/** One ApplyActions run; ms until its stream ended. @throws unless every action applied. */
async function asRun(client: GatekeeperClient, side: Side): Promise<number> {
  const began = performance.now();
  let applied = 0;
  await new Promise<void>((ok, ko) => {
    const call = client.applyActions({
      workspaceId: "ws-bench",
      binding: side.binding,
      url: side.url,
      trust: side.trust,
      actions: side.actions,
    });
    call.on("data", (m: ApplyActionsProgress) => {
      if (m.event?.$case === "outcome" && m.event.outcome.ok) applied++;
      else if (m.event?.$case === "outcome") ko(new Error(`action ${m.actionId}: ${m.event.outcome.error}`));
    });
    call.on("error", ko);
    call.on("end", () => ok());
  });
  if (applied !== side.actions.length)
    throw new Error(`the run applied ${applied} of ${side.actions.length}`);
  return performance.now() - began;
}

function gitCmd(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "bench",
      GIT_AUTHOR_EMAIL: "b@x.invalid",
      GIT_COMMITTER_NAME: "bench",
      GIT_COMMITTER_EMAIL: "b@x.invalid",
    },
  }).trim();
}

/** Two identical bare repositories with N files; N commit payloads (file i edited by commit i). */
function gitSides(work: string): { bare: [string, string]; sides: [Side, Side] } {
  const src = join(work, "src");
  mkdirSync(src, { recursive: true });
  gitCmd(src, "init", "-q", "-b", "main");
  for (let i = 0; i < N; i++) writeFileSync(join(src, `f${i}.txt`), `file ${i}\n`);
  gitCmd(src, "add", "-A");
  gitCmd(src, "commit", "-q", "-m", "seed");
  const a = join(work, "a.git");
  gitCmd(work, "clone", "-q", "--bare", src, a);
  const b = join(work, "b.git");
  cpSync(a, b, { recursive: true });
  const parent = gitCmd(a, "rev-parse", "main");
  const blobs = new Map(
    gitCmd(a, "ls-tree", "main")
      .split("\n")
      .map((l) => [l.split("\t")[1]!, l.split("\t")[0]!.split(" ")[2]!]),
  );
  const actions = (first: number): RunAction[] =>
    Array.from({ length: N }, (_, i) => ({
      actionId: first + i,
      localId: `~${first + i}`,
      payloadJson: JSON.stringify({
        kind: "commit",
        branch: "main",
        message: `bench ${i}`,
        changes: [{ path: `f${i}.txt`, content: `file ${i} edited\n` }],
        parent,
        base: { [`f${i}.txt`]: blobs.get(`f${i}.txt`) },
      }),
      dependencyResults: {},
    }));
  return {
    bare: [a, b],
    sides: [
      { url: `git+file://${a}`, binding: "REPO", trust: "byo", actions: actions(1) },
      { url: `git+file://${b}`, binding: "REPO", trust: "byo", actions: actions(100_001) },
    ],
  };
}

function mcpSide(first: number, tag: string): Side {
  return {
    url: "mcp://memory",
    binding: "MEMORY",
    trust: "vetted",
    actions: Array.from({ length: N }, (_, i) => ({
      actionId: first + i,
      localId: `l${first + i}`,
      payloadJson: JSON.stringify({
        tool: "create_entities",
        arguments: { entities: [{ name: `${tag}-${i}`, entityType: "bench", observations: ["x"] }] },
      }),
      dependencyResults: {},
    })),
  };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "gh-bench-apply-run-"));
  const rows: Row[] = [];
  const detail: Record<string, unknown> = { n: N };
  try {
    log(`git: ${N} commits as ${N} ApplyAction calls vs one ApplyActions run`);
    const { bare, sides } = gitSides(work);
    const git = await startGitGatekeeper({
      allowedRoots: [work],
      approvalAddress: NO_APPROVAL,
      host: "127.0.0.1",
      port: 0,
      logger,
    });
    const gitClient = new GatekeeperClient(`127.0.0.1:${git.port}`, credentials.createInsecure());
    try {
      const calls = await oneByOne(gitClient, sides[0]);
      const run = await asRun(gitClient, sides[1]);
      const count = (b: string) => Number(gitCmd(b, "rev-list", "--count", "main"));
      if (count(bare[0]) !== N + 1 || count(bare[1]) !== N + 1)
        throw new Error("git: not every commit landed");
      detail.git = { callsMs: calls, runMs: run };
      rows.push({
        id: "applyRun.git",
        measurement: `${N} commits, one ApplyActions run (one ref update), per commit`,
        value: round(run / N, 3),
        baseline: `${N} ApplyAction calls (one ref update each), per commit`,
        baselineValue: round(calls / N, 3),
        unit: "ms",
        ratio: run / calls,
      });
    } finally {
      gitClient.close();
      await git.close();
    }

    log(`mcp: ${N} create_entities as ${N} ApplyAction calls vs one ApplyActions run (real memory server)`);
    const memoryServer = join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    const mcp = await startMcpGatekeeper({
      registry: createRegistry({
        servers: {
          memory: {
            command: process.execPath,
            args: [memoryServer],
            env: { MEMORY_FILE_PATH: join(work, "memory.jsonl") },
            vetted: true,
          },
        },
      }),
      approvalAddress: NO_APPROVAL,
      host: "127.0.0.1",
      port: 0,
      logger,
    });
    const mcpClient = new GatekeeperClient(`127.0.0.1:${mcp.port}`, credentials.createInsecure());
    try {
      const warm = mcpSide(1_000_000, "warm"); // connects and starts the server
      await oneByOne(mcpClient, { ...warm, actions: warm.actions.slice(0, 5) });
      const calls = await oneByOne(mcpClient, mcpSide(1, "call"));
      const run = await asRun(mcpClient, mcpSide(10_000, "run"));
      detail.mcp = { callsMs: calls, runMs: run };
      rows.push({
        id: "applyRun.mcp",
        measurement: `${N} MCP tool calls, one ApplyActions run, per call`,
        value: round(run / N, 3),
        baseline: `${N} ApplyAction calls, per call`,
        baselineValue: round(calls / N, 3),
        unit: "ms",
        ratio: run / calls,
      });
    } finally {
      mcpClient.close();
      await mcp.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  printTable(rows);
  const out = join(ROOT, "bench-results");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, "apply-run.json"),
    `${JSON.stringify({ at: new Date().toISOString(), cpus: cpus().length, loadavg: loadavg(), rows, detail }, null, 2)}\n`,
  );
}

await main();
