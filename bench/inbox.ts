/**
 * `npm run bench:inbox`: the inbox of a person who reaches W workspaces holding P pending actions
 * each (default 100 × 100 = 10,000), answered two ways against the same approval service in the same
 * run, per backend (embedded SQLite, and PostgreSQL when Debian's server is installed):
 *  - read model: one GetInbox call for every workspace (projection tables), mapped to the gateway's
 *    JSON rows, as the gateway's /api/inbox does now;
 *  - baseline: GetLog for each workspace (in parallel) and the inbox folded from each whole log, as
 *    the gateway did before the read model (bench/inbox-getlog-baseline.ts).
 * Also reports how long the projector took to project the seeded store from nothing.
 *
 * Env overrides (positive integers): BENCH_INBOX_WORKSPACES (100), BENCH_INBOX_PENDING (100 per
 * workspace), BENCH_INBOX_ITERATIONS (20 samples per figure).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startApprovalService } from "@gatehouse/approval";
import { openEventStore } from "@gatehouse/event-store";
import { startPostgresServer } from "@gatehouse/event-store/postgres-server";
import { toAction, toLogResponse } from "@gatehouse/gateway/mapping";
import {
  DecisionsClient,
  type GetInboxResponse,
  type GetLogPageRequest,
  type LogView,
} from "@gatehouse/proto";
import { startTemporalDevServer } from "@gatehouse/temporal-dev";
import { credentials } from "@grpc/grpc-js";
import { inboxWorkspace } from "./inbox-getlog-baseline.ts";
import { seedPendingWorkspaces } from "./read-model-inbox.ts";
import { envInt, log, printTable, type Row, round, stats, unary } from "./support.ts";

const WORKSPACES = envInt("BENCH_INBOX_WORKSPACES", 100);
const PENDING = envInt("BENCH_INBOX_PENDING", 100);
const ITERATIONS = envInt("BENCH_INBOX_ITERATIONS", 20);
const SECRET = randomUUID() + randomUUID();

async function timed(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

async function benchBackend(backend: string, storeUrl: string, temporalAddress: string): Promise<Row[]> {
  const store = await openEventStore(storeUrl);
  const ids = await seedPendingWorkspaces(store, WORKSPACES, PENDING);
  const service = await startApprovalService({
    store,
    readModelUrl: storeUrl,
    callerTokenSecret: SECRET,
    temporal: { address: temporalAddress },
    skipRecovery: true,
    readModelCatchUpTimeoutMs: 120_000,
  });
  const client = new DecisionsClient(`127.0.0.1:${service.port}`, credentials.createInsecure(), {
    "grpc.max_receive_message_length": 256 * 1024 * 1024,
  });
  try {
    const t0 = performance.now();
    const getInbox = () =>
      unary(client, client.getInbox, { workspaceIds: ids, recentLimit: 50 }) as Promise<GetInboxResponse>;
    const first = await getInbox();
    const projectMs = performance.now() - t0;
    const pending = first.workspaces.reduce((n, w) => n + w.pending.length, 0);
    if (pending !== WORKSPACES * PENDING) throw new Error(`read model shows ${pending} pending`);
    const readModel = async () => {
      const res = await getInbox();
      return res.workspaces.map((w) => ({
        pending: w.pending.map(toAction),
        recent: w.recent.map(toAction),
      }));
    };
    const baseline = async () =>
      Promise.all(
        ids.map(async (id) => {
          const view: LogView = await unary(client, client.getLog, { workspaceId: id });
          return inboxWorkspace({ id, name: id }, toLogResponse(view, view.revision));
        }),
      );
    await baseline(); // warm the per-workspace folds of GetLog, as a long-running service has them
    const rm = stats(await timed(ITERATIONS, readModel));
    const base = stats(await timed(ITERATIONS, baseline));
    const pageReq: GetLogPageRequest = { workspaceId: ids[0] as string, afterId: 0, limit: 100 };
    const onePage = stats(await timed(ITERATIONS, () => unary(client, client.getLogPage, pageReq)));
    log(`${backend}: projected ${WORKSPACES * (PENDING + 2)} events from nothing in ${round(projectMs)} ms`);
    const events = WORKSPACES * (PENDING + 2);
    const row = (
      id: string,
      measurement: string,
      value: number,
      baseline: string,
      baselineValue: number,
    ): Row => ({
      id,
      measurement,
      value,
      baseline,
      baselineValue,
      unit: "ms",
      ratio: value / baselineValue,
    });
    return [
      row(
        `inbox_p50_${backend}`,
        `inbox, ${WORKSPACES} workspaces × ${PENDING} pending (${backend}): p50 of GetInbox from the read model`,
        rm.p50,
        "p50 of GetLog per workspace + fold",
        base.p50,
      ),
      row(`inbox_p99_${backend}`, `same, p99 (${backend})`, rm.p99, "p99 of the GetLog inbox", base.p99),
      row(
        `log_page_${backend}`,
        `one 100-entry GetLogPage (${backend}), p50`,
        onePage.p50,
        "GetInbox p50 (whole inbox)",
        rm.p50,
      ),
      row(
        `project_${backend}`,
        `projector: ${events} events from nothing to the first answer (${backend})`,
        round(projectMs),
        "GetLog inbox p50",
        base.p50,
      ),
    ];
  } finally {
    client.close();
    await service.close();
    await store.close();
  }
}

const temporal = await startTemporalDevServer();
const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-inbox-"));
const rows: Row[] = [];
try {
  rows.push(...(await benchBackend("sqlite", `sqlite:${join(dir, "events.sqlite")}`, temporal.address)));
  let pg: Awaited<ReturnType<typeof startPostgresServer>> | undefined;
  try {
    pg = await startPostgresServer({ migrate: true });
  } catch (err) {
    log(`postgres: skipped (${(err as Error).message.split("\n")[0]})`);
  }
  if (pg) {
    try {
      rows.push(...(await benchBackend("postgres", pg.url, temporal.address)));
    } finally {
      await pg.stop();
    }
  }
} finally {
  await temporal.close();
  rmSync(dir, { recursive: true, force: true });
}
printTable(rows);
