/** benchInbox: inbox latency from the read model over many pending actions (for bench/inbox.ts). */
import { encodeEventData, type PlannedEvent, planned, workspaceStreamId } from "@gatehouse/approval-core";
import { type EventStore, openEventStore } from "@gatehouse/event-store";
import { startReadModel } from "@gatehouse/read-model";

/** Options of {@link benchInbox}. */
export interface BenchInboxOptions {
  /** Event store URL (default "sqlite::memory:"); its workspaces `bench-<n>` are created when missing. */
  storeUrl?: string;
  /** Read-model URL (default: in-memory SQLite). */
  readModelUrl?: string;
  /** Workspaces (default 100). */
  workspaces?: number;
  /** Pending actions per workspace (default 100: 10 000 in all). */
  pendingPerWorkspace?: number;
  /** Inbox calls timed (default 50). */
  iterations?: number;
  /** Decided actions returned per workspace (default 10). */
  recentLimit?: number;
}

/** What {@link benchInbox} measured; latencies in ms. */
export interface BenchInboxResult {
  workspaces: number;
  pendingActions: number;
  /** Time to project the store from position 0 into the read model, ms. */
  projectMs: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

function seedEvents(ws: string, pending: number): PlannedEvent[] {
  const events: PlannedEvent[] = [
    planned("WorkspaceCreated", { workspaceId: ws, name: ws, owner: "" }, "service:kernel"),
    planned(
      "ResourceIntroduced",
      {
        binding: "db",
        url: "mcp+stdio://db",
        gatekeeper: "mcp",
        trust: "vetted",
        dts: "",
        methods: [],
        actionKinds: undefined,
      },
      "service:kernel",
    ),
  ];
  for (let i = 0; i < pending; i++)
    events.push(
      planned(
        "ActionSubmitted",
        {
          binding: "db",
          localId: `l${i}`,
          description: {
            title: `write ${i}`,
            description: "",
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
          },
          dependsOn: i > 0 && i % 5 === 0 ? [i + 1] : [],
          payloadJson: "{}",
          executionId: `x${i % 7}`,
        },
        "agent:bench",
      ),
    );
  return events;
}

/**
 * Appends workspaces `bench-0` … `bench-<workspaces-1>` (those not already there), each with one
 * binding and `pending` pending actions (every fifth depends on the next), through the domain's event
 * encoding. Shared by {@link benchInbox} and `bench/inbox.ts`.
 * @returns the workspace ids, in order.
 */
export async function seedPendingWorkspaces(
  store: EventStore,
  workspaces: number,
  pending: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let w = 0; w < workspaces; w++) {
    const ws = `bench-${w}`;
    ids.push(ws);
    if ((await store.streamRevision(workspaceStreamId(ws))) >= 0) continue;
    const events = seedEvents(ws, pending).map((e) => ({
      type: e.type,
      data: encodeEventData(e),
      metadata: { actor: e.actor },
    }));
    await store.append(workspaceStreamId(ws), events, "no_stream");
  }
  return ids;
}

/**
 * Seeds `workspaces` × `pendingPerWorkspace` pending actions, projects them into a fresh read model and
 * times `inbox(all workspaces)` `iterations` times.
 */
export async function benchInbox(options: BenchInboxOptions = {}): Promise<BenchInboxResult> {
  const workspaces = options.workspaces ?? 100;
  const pending = options.pendingPerWorkspace ?? 100;
  const store = await openEventStore(options.storeUrl ?? "sqlite::memory:");
  try {
    const ids = await seedPendingWorkspaces(store, workspaces, pending);
    const started = performance.now();
    const rm = await startReadModel({ store, url: options.readModelUrl, catchUpTimeoutMs: 600_000 });
    try {
      await rm.rebuild();
      const projectMs = performance.now() - started;
      const times: number[] = [];
      for (let i = 0; i < (options.iterations ?? 50); i++) {
        const t = performance.now();
        const views = await rm.inbox(ids, options.recentLimit ?? 10);
        times.push(performance.now() - t);
        if (views.length !== workspaces) throw new Error(`inbox returned ${views.length} workspaces`);
      }
      times.sort((a, b) => a - b);
      const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] as number;
      return {
        workspaces,
        pendingActions: workspaces * pending,
        projectMs,
        p50Ms: at(0.5),
        p95Ms: at(0.95),
        maxMs: times[times.length - 1] as number,
      };
    } finally {
      await rm.close();
    }
  } finally {
    await store.close();
  }
}
