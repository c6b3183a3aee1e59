/**
 * `npm run bench:lifecycle`: the approval lifecycle's cost, end to end through the real services
 * (approval → gatekeeper-mcp → the real server-memory MCP server), as people see it:
 *   1. approve → applied latency of single approvals (Decisions.Approve returns once applied), p50/p99;
 *   2. wall time of approving a batch of pending actions (Decisions.ApproveBatch all=true).
 * Writes bench-results/lifecycle-<engine>.json. Env: BENCH_LIFECYCLE_SINGLE (default 50),
 * BENCH_LIFECYCLE_BATCH (default 1000).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ActionStatus, DecisionsClient, KernelClient } from "@gatehouse/proto";
import { callUnary, type UnaryMethod } from "@gatehouse/service-kit";
import { credentials } from "@grpc/grpc-js";
import { startDevStack } from "../packages/cli/src/dev-stack.ts";

const SINGLE = Number(process.env.BENCH_LIFECYCLE_SINGLE ?? 50);
const BATCH = Number(process.env.BENCH_LIFECYCLE_BATCH ?? 1000);

/** A unary call with a 10-minute deadline (a 1,000-action batch takes minutes). */
function unary<Req, Res>(client: object, method: UnaryMethod<Req, Res>, req: Req): Promise<Res> {
  return callUnary(client, method, req, 600_000);
}

function pct(samples: number[], q: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? Number.NaN;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-lifecycle-"));
  const stack = await startDevStack({ dataDir: dir, sandbox: "none" });
  const kernel = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
  const decisions = new DecisionsClient(stack.addresses.approval, credentials.createInsecure());
  try {
    const submit = async (ws: string, n: number): Promise<number[]> => {
      const r = await unary(kernel, kernel.executeCode, {
        workspaceId: ws,
        code: `export default async (env: any) => {
          const ids: number[] = [];
          for (let i = 0; i < ${n}; i++) {
            const p = await env.MEMORY.create_entities({ entities: [{ name: "e" + i, entityType: "bench", observations: [] }] });
            ids.push(p.actionId);
          }
          return ids;
        }`,
        caller: { kind: "user", id: "bench" },
        limits: { wallTimeMs: 300_000, heapMb: 0, outputBytes: 0 },
      });
      if (!r.ok) throw new Error(`submit snippet failed: ${r.error?.message}`);
      return JSON.parse(r.returnJson);
    };
    const workspace = async () => {
      const ws = await unary(kernel, kernel.createWorkspace, {
        name: "bench",
        owner: "user:bench",
        members: [],
      });
      await unary(kernel, kernel.introduceResource, { workspaceId: ws.id, url: "mcp://memory", name: "" });
      return ws.id;
    };

    const ws1 = await workspace();
    const ids = await submit(ws1, SINGLE + 3);
    const latencies: number[] = [];
    for (const [i, id] of ids.entries()) {
      const began = performance.now();
      const res = await unary(decisions, decisions.approve, {
        workspaceId: ws1,
        actionId: id,
        decidedBy: "user:bench",
        includeDependencies: false,
      });
      const ms = performance.now() - began;
      if (res.actions.find((a) => a.id === id)?.status !== ActionStatus.ACTION_STATUS_APPLIED) {
        throw new Error(`action ${id} was not applied`);
      }
      if (i >= 3) latencies.push(ms);
    }

    const ws2 = await workspace();
    const batchIds = await submit(ws2, BATCH);
    const began = performance.now();
    const res = await unary(decisions, decisions.approveBatch, {
      workspaceId: ws2,
      actionIds: [],
      decidedBy: "user:bench",
      all: true,
    });
    const batchMs = performance.now() - began;
    const applied = res.actions.filter((a) => a.status === ActionStatus.ACTION_STATUS_APPLIED).length;
    if (applied !== batchIds.length) throw new Error(`batch applied ${applied} of ${batchIds.length}`);

    const engine = process.env.GATEHOUSE_LIFECYCLE_ENGINE ?? "in-process";
    const result = {
      engine,
      approveToAppliedMs: { n: latencies.length, p50: pct(latencies, 0.5), p99: pct(latencies, 0.99) },
      batch: { actions: BATCH, wallMs: Math.round(batchMs), perActionMs: batchMs / BATCH },
      at: new Date().toISOString(),
    };
    mkdirSync("bench-results", { recursive: true });
    writeFileSync(`bench-results/lifecycle-${engine}.json`, `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    kernel.close();
    decisions.close();
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
