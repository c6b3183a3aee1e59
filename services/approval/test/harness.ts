/**
 * Integration harness: a real Temporal dev server, the real lifecycle worker as a separate process,
 * a real event store shared by both (SQLite in a temp dir, or `backend: "postgres"`: a real PostgreSQL
 * on loopback, see @gatehouse/event-store/postgres-server), the real approval gRPC server on
 * 127.0.0.1:0 with real gRPC clients, and a RecordingGatekeeper (a FAKE gatekeeper process, see
 * recording-gatekeeper.ts). One stack per test file; each test gets its own workspace.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mintCallerToken } from "@gatehouse/caller-token";
import { type EventStore, type NewEvent, openEventStore, openSqliteEventStore } from "@gatehouse/event-store";
import { type PostgresServer, startPostgresServer } from "@gatehouse/event-store/postgres-server";
import {
  type ActionDescription,
  ApprovalQueueClient,
  type BindingActionKind,
  DecisionsClient,
  ResourceIntroduced,
  WorkspaceCreated,
} from "@gatehouse/proto";
import { startTemporalDevServer, type TemporalDevServer } from "@gatehouse/temporal-dev";
import { type Client, credentials, type ServiceError } from "@grpc/grpc-js";
import { type ApprovalService, type ApprovalServiceOptions, startApprovalService } from "../src/index.ts";
import { RecordingGatekeeper } from "./recording-gatekeeper.ts";
import { WorkerProcess } from "./worker-process.ts";

export { RecordingGatekeeper } from "./recording-gatekeeper.ts";

export const SECRET = "test-secret-test-secret-test-secret-0123";

/** Temporal + worker + gatekeeper + data dir, shared by the tests of one file. */
export interface Stack {
  dir: string;
  /** The SQLite file (backend "sqlite" only; tests that open it directly run on SQLite). */
  eventsPath: string;
  /** The store every process of the stack opens: `sqlite:<eventsPath>` or the PostgreSQL URL. */
  storeUrl: string;
  /** Opens another connection to the stack's store (SQLite polls every 10 ms). */
  openStore(): Promise<EventStore>;
  /** The PostgreSQL server (backend "postgres" only). */
  postgres: PostgresServer | undefined;
  temporal: TemporalDevServer;
  gatekeeper: RecordingGatekeeper;
  worker: WorkerProcess;
  close(): Promise<void>;
}

/**
 * Starts the stack. The worker knows gatekeeper kind "mcp" (the RecordingGatekeeper).
 * `startWorker: false` leaves the worker stopped.
 */
export async function startStack(
  options: { startWorker?: boolean; backend?: "sqlite" | "postgres" } = {},
): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-approval-"));
  const eventsPath = join(dir, "events.sqlite");
  const postgres = options.backend === "postgres" ? await startPostgresServer({ migrate: true }) : undefined;
  const storeUrl = postgres ? postgres.url : `sqlite:${eventsPath}`;
  const temporal = await startTemporalDevServer();
  const gatekeeper = await new RecordingGatekeeper().start();
  const worker = new WorkerProcess({
    temporalAddress: temporal.address,
    dataDir: dir,
    ...(postgres ? { eventStoreUrl: storeUrl } : {}),
    gatekeeperAddresses: `mcp=127.0.0.1:${gatekeeper.port}`,
  });
  const stack: Stack = {
    dir,
    eventsPath,
    storeUrl,
    openStore: async () =>
      postgres ? openEventStore(storeUrl) : openSqliteEventStore(eventsPath, { pollIntervalMs: 10 }),
    postgres,
    temporal,
    gatekeeper,
    worker,
    async close() {
      await worker.stop();
      gatekeeper.close();
      await temporal.close();
      await postgres?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    // The store exists before the worker opens it.
    const store = await stack.openStore();
    await store.close();
    if (options.startWorker !== false) await worker.start();
  } catch (err) {
    await stack.close();
    throw err;
  }
  return stack;
}

export interface Harness {
  /** This test's workspace id. */
  ws: string;
  stack: Stack;
  store: EventStore;
  gatekeeper: RecordingGatekeeper;
  service: ApprovalService;
  queue: ApprovalQueueClient;
  decisions: DecisionsClient;
  /** A caller token for `binding` in this test's workspace (or `workspaceId`). */
  token(binding: string, workspaceId?: string): string;
  /** The workspace stream's last revision. */
  revision(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The action kinds every seeded binding publishes: `mcp.tool.add` and `git.commit` may be
 * auto-approved, `mcp.tool.delete` never (its reason names the destructive hint).
 */
export const SEEDED_ACTION_KINDS: BindingActionKind[] = [
  { tag: "mcp.tool.add", label: "Add", autoApprovable: true, notAutoApprovableReason: "" },
  { tag: "git.commit", label: "Commit", autoApprovable: true, notAutoApprovableReason: "" },
  {
    tag: "mcp.tool.delete",
    label: "Delete",
    autoApprovable: false,
    notAutoApprovableReason: "annotations.destructiveHint=true (must be false)",
  },
];

/** Appends WorkspaceCreated + ResourceIntroduced for each binding (what the kernel does). */
export async function seedWorkspace(
  store: EventStore,
  workspaceId: string,
  bindings: string[],
  gatekeeperKind = "mcp",
): Promise<void> {
  const events: NewEvent[] = [
    {
      type: "WorkspaceCreated",
      data: WorkspaceCreated.toJSON({ workspaceId, name: workspaceId, owner: "" }),
      metadata: { actor: "service:kernel" },
    },
    ...bindings.map((b) => ({
      type: "ResourceIntroduced",
      data: ResourceIntroduced.toJSON({
        binding: b,
        url: `mcp+stdio://${b.toLowerCase()}`,
        gatekeeper: gatekeeperKind,
        trust: "vetted",
        dts: "",
        methods: [],
        actionKinds: { kinds: SEEDED_ACTION_KINDS },
      }),
      metadata: { actor: "user:alice" },
    })),
  ];
  await store.append(`workspace-${workspaceId}`, events, "no_stream");
}

/** A fresh workspace id for one test. */
export function newWorkspaceId(): string {
  return `w-${randomUUID().slice(0, 8)}`;
}

/**
 * A fresh workspace (bindings MEM and GIT by default) and an approval service on the stack, whose
 * RequestRevert reaches the stack's RecordingGatekeeper for gatekeeper kind `gatekeeperKind`.
 * `ws` reuses an existing workspace (a second approval process on the same store).
 */
export async function startHarness(
  stack: Stack,
  options: {
    ws?: string;
    bindings?: string[];
    gatekeeperKind?: string;
    service?: Partial<ApprovalServiceOptions>;
    /** The approval service's store URL (default the stack's), e.g. through a TcpProxy that cuts it. */
    storeUrl?: string;
  } = {},
): Promise<Harness> {
  const store = options.storeUrl ? await openEventStore(options.storeUrl) : await stack.openStore();
  const ws = options.ws ?? newWorkspaceId();
  let service: ApprovalService;
  try {
    if (!options.ws)
      await seedWorkspace(store, ws, options.bindings ?? ["MEM", "GIT"], options.gatekeeperKind);
    service = await startApprovalService({
      store,
      callerTokenSecret: SECRET,
      temporal: { address: stack.temporal.address },
      gatekeepers: { [options.gatekeeperKind ?? "mcp"]: `127.0.0.1:${stack.gatekeeper.port}` },
      port: 0,
      ...options.service,
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  const addr = `127.0.0.1:${service.port}`;
  const queue = new ApprovalQueueClient(addr, credentials.createInsecure());
  const decisions = new DecisionsClient(addr, credentials.createInsecure());
  return {
    ws,
    stack,
    store,
    gatekeeper: stack.gatekeeper,
    service,
    queue,
    decisions,
    token: (binding, workspaceId = ws) =>
      mintCallerToken(SECRET, {
        workspaceId,
        binding,
        caller: { kind: "agent", id: "chat-1" },
        executionId: "exec-1",
      }),
    revision: () => store.streamRevision(`workspace-${ws}`),
    async close() {
      queue.close();
      decisions.close();
      stack.gatekeeper.reset();
      await service.close();
      await store.close();
    },
  };
}

/**
 * Calls a unary grpc-js client method as a promise. An Approve or ApproveBatch request without
 * `descriptionDigests` gets an empty map (a decision bound to no description): the generated encoder
 * needs the map field present, and most tests here are about something other than digests.
 */
export function call<Req, Res>(client: Client, method: string, request: Req): Promise<Res> {
  const sent =
    (method === "approve" || method === "approveBatch") && request !== null && typeof request === "object"
      ? { descriptionDigests: {}, ...request }
      : request;
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (r: unknown, cb: (e: ServiceError | null, r: Res) => void) => void>)[
      method
    ]!.call(client, sent, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/** Polls `check` until it returns true or `timeoutMs` (default 60 s: a busy machine is slow) passes; returns its last answer. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function description(over: Partial<ActionDescription> = {}): ActionDescription {
  return {
    title: "Call create_entities on memory",
    description: "```json\n{}\n```",
    descriptionIsComplete: true,
    delivery: 1,
    dependsOn: [],
    implementsRevert: 0,
    autoApprovable: false,
    actionKind: undefined,
    classifiedBy: "test",
    egress: false,
    summary: "",
    fields: [],
    risks: [],
    preflightWarnings: [],
    preview: "",
    ...over,
  };
}
