import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { mintCallerToken } from "@gatehouse/caller-token";
import { startDevStack } from "@gatehouse/dev-stack";
import { untilFinal } from "@gatehouse/e2e/support/until-final";
import { ActionStatus, ApprovalQueueClient, DecisionsClient, KernelClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import { directMcp, mcpFloor } from "./lifecycle-direct.ts";
import {
  gatehouseCli,
  refilled,
  runscSandboxes,
  sampleRss,
  temporalPid,
  timeSpawns,
  workflowTypes,
} from "./lifecycle-probes.ts";
import {
  envInt,
  envSandbox,
  gitCommit,
  log,
  printTable,
  type Row,
  returned,
  round,
  runBench,
  stats,
  unary,
} from "./support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const SINGLE = envInt("BENCH_LIFECYCLE_SINGLE", 50);
const BATCH = envInt("BENCH_LIFECYCLE_BATCH", 1000);
const LARGE = envInt("BENCH_LIFECYCLE_LARGE", 5000);
const GRPC = envInt("BENCH_LIFECYCLE_GRPC", 200);
const CLI_RUNS = envInt("BENCH_LIFECYCLE_CLI_RUNS", 5);
const SANDBOX = envSandbox();
/** Writes per snippet (an execution may run at most 5 minutes). */
const CHUNK = 1000;
/** One read is timed before every READ_EVERY-th write. */
const READ_EVERY = 10;
const WARMUP = 3;
const HOUR = 3_600_000;

/** Writes and reads timed inside snippets, ms (Date.now() resolution), and the action ids made. */
interface Submitted {
  ids: number[];
  writeMs: number[];
  readMs: number[];
}

async function main() {
  const began = performance.now();
  const loadBefore = loadavg().map((x) => round(x, 2));
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-lifecycle-"));
  const secret = randomBytes(32).toString("base64url");
  log(`starting the dev stack in ${dir} (sandbox ${SANDBOX})`);
  const stack = await startDevStack({ dataDir: dir, sandbox: SANDBOX, callerTokenSecret: secret });
  const kernel = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
  const decisions = new DecisionsClient(stack.addresses.approval, credentials.createInsecure());
  const queue = new ApprovalQueueClient(stack.addresses.approval, credentials.createInsecure());
  const temporal = temporalPid(dir);
  const cliEnv = {
    ...process.env,
    GATEHOUSE_KERNEL_ADDRESS: stack.addresses.kernel,
    GATEHOUSE_APPROVAL_ADDRESS: stack.addresses.approval,
    GATEHOUSE_DATA_DIR: join(dir, "cli"),
  };
  try {
    const workspace = async (name: string) => {
      const ws = await unary(kernel, kernel.createWorkspace, { name, owner: "user:bench", members: [] });
      await unary(kernel, kernel.introduceResource, { workspaceId: ws.id, url: "mcp://memory", name: "" });
      return ws.id;
    };
    /** `n` writes (entities `<prefix>-<i>`) from snippets of at most CHUNK, a read timed before every READ_EVERY-th. */
    const submit = async (ws: string, prefix: string, n: number): Promise<Submitted> => {
      const out: Submitted = { ids: [], writeMs: [], readMs: [] };
      for (let from = 0; from < n; from += CHUNK) {
        const r = await unary(
          kernel,
          kernel.executeCode,
          {
            workspaceId: ws,
            code: writesSnippet(prefix, from, Math.min(n, from + CHUNK)),
            caller: { kind: "user", id: "bench" },
            limits: { wallTimeMs: 300_000, heapMb: 0, outputBytes: 0 },
            executionId: "",
          },
          310_000,
        );
        const part = returned(r) as Submitted;
        out.ids.push(...part.ids);
        out.writeMs.push(...part.writeMs);
        out.readMs.push(...part.readMs);
        log(`${prefix}: ${out.ids.length} of ${n} submitted`);
      }
      return out;
    };
    /** ApproveBatch all=true, then WatchLog until all `ids` are final; wall ms. @throws unless all applied. */
    const approveAll = async (ws: string, ids: number[]): Promise<number> => {
      const t0 = performance.now();
      const watched = untilFinal(decisions, ws, ids, {
        onProgress: (n) => {
          if (n % 500 === 0) log(`${ws}: ${n} of ${ids.length} final`);
        },
      });
      await unary(
        decisions,
        decisions.approveBatch,
        {
          workspaceId: ws,
          actionIds: [],
          decidedBy: "user:bench",
          all: true,
          returnOnceRecorded: true,
          descriptionDigests: {},
        },
        HOUR,
      );
      const { status, lastFinalAt } = await watched;
      const applied = [...status.values()].filter((s) => s === ActionStatus.ACTION_STATUS_APPLIED).length;
      if (applied !== ids.length) throw new Error(`${ws}: ${applied} of ${ids.length} applied`);
      return lastFinalAt - t0;
    };

    // CLI start with no service needed, next to a bare Node start.
    const cli = gatehouseCli(ROOT);
    log(`CLI: ${cli.label}`);
    const nodeMs = await timeSpawns(process.execPath, ["-e", ""], CLI_RUNS);
    const helpMs = await timeSpawns(cli.command, [...cli.args, "--help"], CLI_RUNS, cliEnv);

    // Direct baselines: an MCP client on its own server-memory process; SubmitAction over gRPC.
    log("direct MCP calls");
    const direct = await directMcp(join(dir, "direct-memory.jsonl"), SINGLE + WARMUP, WARMUP);
    const wsGrpc = await workspace("bench-grpc");
    const grant = (await unary(kernel, kernel.describeBindings, { workspaceId: wsGrpc })).revision;
    const token = mintCallerToken(secret, {
      workspaceId: wsGrpc,
      binding: "MEMORY",
      caller: { kind: "user", id: "bench" },
      executionId: "bench-direct",
      grant,
    });
    const grpcMs: number[] = [];
    for (let i = 0; i < GRPC + WARMUP; i++) {
      const t = performance.now();
      await unary(queue, queue.submitAction, {
        callerToken: token,
        localId: `direct-${i}`,
        description: benchDescription(i),
        payloadJson: JSON.stringify({ tool: "create_entities", arguments: { entities: [] } }),
      });
      if (i >= WARMUP) grpcMs.push(performance.now() - t);
    }

    // Single approvals.
    log("single approvals");
    const wsSingle = await workspace("bench-single");
    const small = await submit(wsSingle, "single", SINGLE + WARMUP);
    const approveMs: number[] = [];
    for (const [i, id] of small.ids.entries()) {
      const t = performance.now();
      const res = await unary(
        decisions,
        decisions.approve,
        {
          workspaceId: wsSingle,
          actionId: id,
          decidedBy: "user:bench",
          includeDependencies: false,
          descriptionDigests: {},
        },
        600_000,
      );
      if (res.actions.find((a) => a.id === id)?.status !== ActionStatus.ACTION_STATUS_APPLIED) {
        throw new Error(`single approval: action ${id} was not applied`);
      }
      if (i >= WARMUP) approveMs.push(performance.now() - t);
    }
    const smallActionsMs = await timeSpawns(
      cli.command,
      [...cli.args, "actions", wsSingle],
      CLI_RUNS,
      cliEnv,
    );

    // The batch.
    log(`batch of ${BATCH}`);
    const wsBatch = await workspace("bench-batch");
    const batch = await submit(wsBatch, "batch", BATCH);
    const batchMs = await approveAll(wsBatch, batch.ids);
    log(`batch of ${BATCH}: ${Math.round(batchMs)} ms`);

    // Memory with LARGE pending, then the large batch.
    // The workspace and its warm sandbox first (a snippet with one read), and the runner's warm
    // spare it replaces: a new workspace's sandbox (runsc, gofer, isolate host: ~100 MiB) is not
    // memory per pending action.
    const sandboxesBefore = runscSandboxes();
    const wsLarge = await workspace("bench-large");
    await unary(
      kernel,
      kernel.executeCode,
      {
        workspaceId: wsLarge,
        code: `export default async (env: any) => { await env.MEMORY.open_nodes({ names: ["large-probe"] }); };`,
        caller: { kind: "user", id: "bench" },
        limits: { wallTimeMs: 60_000, heapMb: 0, outputBytes: 0 },
        executionId: "",
      },
      70_000,
    );
    if (sandboxesBefore > 0) await refilled(sandboxesBefore + 1);
    const rssBefore = sampleRss(temporal);
    const large = await submit(wsLarge, "large", LARGE);
    const rssSubmitted = sampleRss(temporal);
    const largeActionsMs = await timeSpawns(
      cli.command,
      [...cli.args, "actions", wsLarge],
      Math.min(3, CLI_RUNS),
      cliEnv,
    );
    const rssPending = sampleRss(temporal); // some seconds later: what the stack settled at
    log(`batch of ${LARGE}`);
    const largeMs = await approveAll(wsLarge, large.ids);
    log(`batch of ${LARGE}: ${Math.round(largeMs)} ms`);
    const rssApplied = sampleRss(temporal);
    log(`floor: ${BATCH} then ${LARGE} writes by a plain MCP client on a fresh server-memory`);
    const [floorBatchMs = 0, floorLargeMs = 0] = await mcpFloor(join(dir, "floor-memory.jsonl"), [
      { prefix: "batch", n: BATCH },
      { prefix: "large", n: LARGE },
    ]);

    const engine = {
      orchestrator: "temporal",
      temporal: stack.addresses.temporal,
      workflowExecutionsByType: await workflowTypes(stack.addresses.temporal),
      worker: "in-process (startLifecycleWorker)",
    };
    const loadAfter = loadavg().map((x) => round(x, 2));

    const writes = stats([...small.writeMs, ...batch.writeMs]);
    const reads = stats([...small.readMs, ...batch.readMs]);
    const largeWrites = stats(large.writeMs);
    const largeReads = stats(large.readMs);
    const grpc = stats(grpcMs);
    const approve = stats(approveMs);
    const node = stats(nodeMs);
    const help = stats(helpMs);
    const perPendingKiB = (Math.max(rssSubmitted.totalKiB, rssPending.totalKiB) - rssBefore.totalKiB) / LARGE;
    const rows = [
      row(
        "submit.agent.p50",
        `write in a snippet (SubmitAction as the agent sees it), p50, ≤ ${BATCH} pending`,
        writes.p50,
        "read in the same snippets (an observation), p50",
        reads.p50,
        "ms",
        "≤ 5 ms",
      ),
      row(
        "submit.agent.p99",
        "write in a snippet, p99",
        writes.p99,
        "read in the same snippets, p99",
        reads.p99,
        "ms",
      ),
      row(
        "submit.agent.large.p50",
        `write in a snippet, p50, 0 → ${LARGE} pending`,
        largeWrites.p50,
        "read in the same snippets, p50",
        largeReads.p50,
        "ms",
        "≤ 5 ms",
      ),
      row(
        "submit.agent.large.p99",
        `write in a snippet, p99, 0 → ${LARGE} pending`,
        largeWrites.p99,
        "read in the same snippets, p99",
        largeReads.p99,
        "ms",
      ),
      row(
        "submit.grpc.p50",
        "ApprovalQueue.SubmitAction direct over gRPC, p50",
        grpc.p50,
        "direct MCP create_entities on server-memory, p50",
        direct.write.p50,
        "ms",
      ),
      row(
        "submit.grpc.p99",
        "ApprovalQueue.SubmitAction direct over gRPC, p99",
        grpc.p99,
        "direct MCP create_entities, p99",
        direct.write.p99,
        "ms",
      ),
      row(
        "approve.single.p50",
        "approve → applied, one action (Decisions.Approve), p50",
        approve.p50,
        "direct MCP create_entities, p50",
        direct.write.p50,
        "ms",
      ),
      row(
        "approve.single.p99",
        "approve → applied, one action, p99",
        approve.p99,
        "direct MCP create_entities, p99",
        direct.write.p99,
        "ms",
      ),
      row(
        "batch.perAction",
        `${BATCH} approved → all applied, per action`,
        batchMs / BATCH,
        "approve → applied of one action, p50",
        approve.p50,
        "ms",
      ),
      row(
        "batch.wall",
        `${BATCH} approved → all applied, wall`,
        batchMs / 1000,
        `${BATCH} × one action's approve → applied p50`,
        (approve.p50 * BATCH) / 1000,
        "s",
        BATCH === 1000 ? "≤ 10 s" : undefined,
      ),
      row(
        "batch.floor",
        `${BATCH} approved → all applied, wall`,
        batchMs / 1000,
        `floor: the same ${BATCH} writes, plain MCP client → fresh server-memory, one after another`,
        floorBatchMs / 1000,
        "s",
        BATCH === 1000 ? "≤ 10 s" : undefined,
      ),
      row(
        "large.perAction",
        `${LARGE} approved → all applied, per action`,
        largeMs / LARGE,
        "approve → applied of one action, p50",
        approve.p50,
        "ms",
      ),
      row(
        "large.wall",
        `${LARGE} approved → all applied, wall`,
        largeMs / 1000,
        `${LARGE} × one action's approve → applied p50`,
        (approve.p50 * LARGE) / 1000,
        "s",
        LARGE === 5000 ? "≤ 60 s" : undefined,
      ),
      row(
        "large.floor",
        `${LARGE} approved → all applied, wall`,
        largeMs / 1000,
        `floor: the same ${LARGE} writes after the ${BATCH}, plain MCP client → the same fresh server`,
        floorLargeMs / 1000,
        "s",
        LARGE === 5000 ? "≤ 60 s" : undefined,
      ),
      row(
        "cli.help",
        "gatehouse --help (no service), p50",
        help.p50,
        "node -e '', p50",
        node.p50,
        "ms",
        "≤ 500 ms",
      ),
      row(
        "cli.actions.small",
        `gatehouse actions <ws> (${SINGLE + WARMUP} rows), p50`,
        stats(smallActionsMs).p50,
        "node -e '', p50",
        node.p50,
        "ms",
      ),
      row(
        "cli.actions.large",
        `gatehouse actions <ws> (${LARGE} rows), p50`,
        stats(largeActionsMs).p50,
        "node -e '', p50",
        node.p50,
        "ms",
        "≤ 1,000 ms",
      ),
      row(
        "rss.stack",
        `dev stack process RSS, ${LARGE} pending`,
        mib(rssPending.stackKiB),
        "before submitting them",
        mib(rssBefore.stackKiB),
        "MiB",
      ),
      row(
        "rss.temporal",
        `Temporal dev server RSS, ${LARGE} pending`,
        mib(rssPending.temporalKiB),
        "before submitting them",
        mib(rssBefore.temporalKiB),
        "MiB",
      ),
      row(
        "rss.children",
        `children RSS (MCP servers, sandboxes), ${LARGE} pending`,
        mib(rssPending.childrenKiB),
        "before submitting them",
        mib(rssBefore.childrenKiB),
        "MiB",
      ),
      row(
        "rss.total",
        `stack + Temporal + children RSS, ${LARGE} pending`,
        mib(rssPending.totalKiB),
        "before submitting them",
        mib(rssBefore.totalKiB),
        "MiB",
      ),
      row(
        "rss.perPending",
        "RSS growth per pending action (stack + Temporal + children)",
        perPendingKiB,
        "the goal",
        10,
        "KiB",
        "≤ 10 KiB",
      ),
    ];
    const result = {
      bench: "lifecycle",
      at: new Date().toISOString(),
      engine,
      commit: gitCommit(ROOT),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? "",
        loadAverage: { before: loadBefore, after: loadAfter },
        node: process.version,
      },
      sandboxMode: stack.sandboxMode,
      cli: cli.label,
      config: {
        single: SINGLE,
        batch: BATCH,
        large: LARGE,
        grpc: GRPC,
        cliRuns: CLI_RUNS,
        warmup: WARMUP,
        readEvery: READ_EVERY,
      },
      rows,
      detail: {
        writesInSnippet: writes,
        readsInSnippet: reads,
        writesInSnippetLarge: largeWrites,
        readsInSnippetLarge: largeReads,
        submitGrpc: grpc,
        directMcpWrite: direct.write,
        directMcpRead: direct.read,
        approveToApplied: approve,
        batch: { actions: BATCH, wallMs: Math.round(batchMs) },
        large: { actions: LARGE, wallMs: Math.round(largeMs) },
        floor: { batchWallMs: Math.round(floorBatchMs), largeWallMs: Math.round(floorLargeMs) },
        cli: { node, help, actionsSmall: stats(smallActionsMs), actionsLarge: stats(largeActionsMs) },
        rssKiB: { before: rssBefore, submitted: rssSubmitted, pending: rssPending, applied: rssApplied },
      },
      totalSeconds: Math.round((performance.now() - began) / 1000),
    };
    printTable(rows);
    const types = Object.entries(engine.workflowExecutionsByType.types)
      .map(([t, n]) => `${t} ${n}`)
      .join(", ");
    console.log(
      `\nengine: Temporal (${types || "no workflows"})   sandbox ${stack.sandboxMode}   node ${process.version}   ${cpus().length} CPUs, load ${loadBefore[0]} -> ${loadAfter[0]}   total ${result.totalSeconds}s`,
    );
    mkdirSync(join(ROOT, "bench-results"), { recursive: true });
    const outFile = join(ROOT, "bench-results/lifecycle.json");
    writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`wrote ${outFile}`);
  } finally {
    kernel.close();
    decisions.close();
    queue.close();
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** How many gVisor sandboxes (runsc-sandbox processes) run below this process. */
/** A table row; `ratio` is value / baseline. */
function row(
  id: string,
  measurement: string,
  value: number,
  baseline: string,
  baselineValue: number,
  unit: string,
  goal?: string,
): Row {
  return {
    id,
    measurement,
    value: round(value, 3),
    baseline,
    baselineValue: round(baselineValue, 3),
    unit,
    ratio: round(value / baselineValue, 3),
    ...(goal ? { goal } : {}),
  };
}

const mib = (kib: number) => kib / 1024;

/**
 * A snippet making writes `from`..`to`-1 (create_entities of `<prefix>-<i>`, one entity each), timing
 * each with Date.now(), and a read (open_nodes) before every READ_EVERY-th write.
 */
function writesSnippet(prefix: string, from: number, to: number): string {
  return `export default async (env: any) => {
  const ids: number[] = [], writeMs: number[] = [], readMs: number[] = [];
  for (let i = ${from}; i < ${to}; i++) {
    if (i % ${READ_EVERY} === 0) {
      const r = Date.now();
      await env.MEMORY.open_nodes({ names: ["${prefix}-probe"] });
      readMs.push(Date.now() - r);
    }
    const w = Date.now();
    const p = await env.MEMORY.create_entities({ entities: [{ name: "${prefix}-" + i, entityType: "bench", observations: [] }] });
    writeMs.push(Date.now() - w);
    ids.push(p.actionId);
  }
  return { ids, writeMs, readMs };
};`;
}

/** An action description as a gatekeeper would send it (the approval service checks its fields). */
function benchDescription(i: number) {
  return {
    title: `Call create_entities on memory (${i})`,
    description: "```json\n{}\n```",
    descriptionIsComplete: true,
    delivery: 1,
    dependsOn: [],
    implementsRevert: 0,
    autoApprovable: false,
    actionKind: undefined,
    classifiedBy: "bench",
    egress: false,
    summary: "",
    fields: [],
    risks: [],
    preflightWarnings: [],
    preview: "",
  };
}

runBench(main);
