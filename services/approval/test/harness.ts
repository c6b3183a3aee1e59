/**
 * Integration harness: a real SQLite event store in a temp dir, the real approval gRPC server on
 * 127.0.0.1:0, real gRPC clients, and a RecordingGatekeeper.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mintCallerToken } from "@gatehouse/caller-token";
import { type EventStore, type NewEvent, openSqliteEventStore } from "@gatehouse/event-store";
import {
  type ActionDescription,
  type ActionRejectedRequest,
  type ApplyActionRequest,
  type ApplyActionResponse,
  ApprovalQueueClient,
  DecisionsClient,
  ResourceIntroduced,
  WorkspaceCreated,
} from "@gatehouse/proto";
import { type Client, credentials, type ServiceError } from "@grpc/grpc-js";
import { type ApprovalService, type GatekeeperApplier, startApprovalService } from "../src/index.ts";

export const SECRET = "test-secret-test-secret-test-secret-0123";

/**
 * FAKE gatekeeper: records ApplyAction/ActionRejected calls in memory and answers as configured.
 * It stands in for a gatekeeper process here; the real MCP gatekeeper is exercised in the
 * cross-service suite.
 */
export class RecordingGatekeeper implements GatekeeperApplier {
  readonly applied: ApplyActionRequest[] = [];
  readonly rejected: ActionRejectedRequest[] = [];
  /** Delay before answering ApplyAction, in ms. */
  delayMs = 0;
  /** Answer per action id; default ok with `{"applied": <id>}`. */
  answers = new Map<number, ApplyActionResponse | Error>();

  async apply(_gatekeeper: string, request: ApplyActionRequest): Promise<ApplyActionResponse> {
    this.applied.push(request);
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    const answer = this.answers.get(request.actionId);
    if (answer instanceof Error) throw answer;
    return answer ?? { ok: true, resultJson: JSON.stringify({ applied: request.actionId }), error: "" };
  }
  async notifyRejected(_gatekeeper: string, request: ActionRejectedRequest): Promise<void> {
    this.rejected.push(request);
  }
  close(): void {}
}

export interface Harness {
  dir: string;
  store: EventStore;
  gatekeeper: RecordingGatekeeper;
  service: ApprovalService;
  queue: ApprovalQueueClient;
  decisions: DecisionsClient;
  token(binding: string, workspaceId?: string): string;
  close(): Promise<void>;
}

/** Appends WorkspaceCreated + ResourceIntroduced for each binding (what the kernel does). */
export async function seedWorkspace(
  store: EventStore,
  workspaceId: string,
  bindings: string[],
): Promise<void> {
  const events: NewEvent[] = [
    {
      type: "WorkspaceCreated",
      data: WorkspaceCreated.toJSON({ workspaceId, name: workspaceId }),
      metadata: { actor: "service:kernel" },
    },
    ...bindings.map((b) => ({
      type: "ResourceIntroduced",
      data: ResourceIntroduced.toJSON({
        binding: b,
        url: `mcp+stdio://${b.toLowerCase()}`,
        gatekeeper: "mcp",
        trust: "vetted",
        dts: "",
        methods: [],
      }),
      metadata: { actor: "user:alice" },
    })),
  ];
  await store.append(`workspace-${workspaceId}`, events, "no_stream");
}

export async function startHarness(
  options: { seed?: boolean; dir?: string; instanceId?: string } = {},
): Promise<Harness> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "gatehouse-approval-"));
  const store = openSqliteEventStore(join(dir, "events.sqlite"), { pollIntervalMs: 10 });
  if (options.seed !== false) await seedWorkspace(store, "w1", ["MEM", "GIT"]);
  const gatekeeper = new RecordingGatekeeper();
  return attach(dir, store, gatekeeper, options.instanceId);
}

export async function attach(
  dir: string,
  store: EventStore,
  gatekeeper: RecordingGatekeeper,
  instanceId?: string,
): Promise<Harness> {
  const service = await startApprovalService({
    store,
    callerTokenSecret: SECRET,
    gatekeepers: gatekeeper,
    port: 0,
    ...(instanceId ? { instanceId } : {}),
  });
  const addr = `127.0.0.1:${service.port}`;
  const queue = new ApprovalQueueClient(addr, credentials.createInsecure());
  const decisions = new DecisionsClient(addr, credentials.createInsecure());
  return {
    dir,
    store,
    gatekeeper,
    service,
    queue,
    decisions,
    token: (binding, workspaceId = "w1") =>
      mintCallerToken(SECRET, {
        workspaceId,
        binding,
        caller: { kind: "agent", id: "chat-1" },
        executionId: "exec-1",
      }),
    async close() {
      queue.close();
      decisions.close();
      await service.close();
      await store.close();
      if (!sharedDirs.has(dir)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Dirs shared by several harnesses (removed by the last one's owner). */
export const sharedDirs = new Set<string>();

/** Calls a unary grpc-js client method as a promise. */
export function call<Req, Res>(client: Client, method: string, request: Req): Promise<Res> {
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (r: Req, cb: (e: ServiceError | null, r: Res) => void) => void>)[
      method
    ]!.call(client, request, (err, res) => (err ? reject(err) : resolve(res)));
  });
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
    ...over,
  };
}
