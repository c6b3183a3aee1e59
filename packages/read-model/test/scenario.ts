/**
 * Realistic workspace streams for the read-model tests: kernel events appended directly, every
 * approval event produced by approval-core's decider (`WorkspaceStreams.execute` + `decide`), driven by
 * a seeded random walk over observations, submissions with dependencies, approvals, rejections with
 * cascades, applies, failures, rules set and unset, the latch, refusals, ChatStarted after the chat's
 * entries, binding removal and events the domain ignores.
 */
import {
  ApprovalError,
  type Command,
  decide,
  encodeEventData,
  foldEvents,
  planned,
  toLogView,
  WorkspaceStreams,
  workspaceStreamId,
} from "@gatehouse/approval-core";
import type { EventStore } from "@gatehouse/event-store";
import { type ActionDescription, ActionStatus, type BindingActionKind, LogView } from "@gatehouse/proto";

const KINDS: BindingActionKind[] = [
  { tag: "mcp.tool.add", label: "Add", autoApprovable: true, notAutoApprovableReason: "" },
  { tag: "mcp.tool.delete", label: "Delete", autoApprovable: false, notAutoApprovableReason: "destructive" },
];

/** A small deterministic PRNG (mulberry32): the same seed gives the same walk. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Appends WorkspaceCreated and ResourceIntroduced for each binding (what the kernel does). */
export async function seedWorkspace(store: EventStore, ws: string, bindings: string[]): Promise<void> {
  const events = [
    planned("WorkspaceCreated", { workspaceId: ws, name: ws, owner: "user:alice" }, "service:kernel"),
    ...bindings.map((b) =>
      planned(
        "ResourceIntroduced",
        {
          binding: b,
          url: `mcp+stdio://${b}`,
          gatekeeper: "mcp",
          trust: "vetted",
          dts: "",
          methods: [],
          actionKinds: { kinds: KINDS },
        },
        "user:alice",
      ),
    ),
  ];
  await store.append(
    workspaceStreamId(ws),
    events.map((e) => ({ type: e.type, data: encodeEventData(e), metadata: { actor: e.actor } })),
    "no_stream",
  );
}

function description(title: string, dependsOn: string[], auto: boolean): ActionDescription {
  return {
    title,
    description: `do ${title}`,
    descriptionIsComplete: true,
    delivery: 1,
    dependsOn,
    implementsRevert: 0,
    autoApprovable: auto,
    actionKind: auto ? { tag: "mcp.tool.add", label: "Add" } : { tag: "mcp.tool.delete", label: "Delete" },
    classifiedBy: "test",
    egress: false,
    summary: "",
    fields: [],
    risks: [],
    preflightWarnings: [],
    preview: "",
  };
}

/** Runs one command through the decider; expected refusals (ApprovalError) are swallowed. */
async function run(
  streams: WorkspaceStreams,
  ws: string,
  command: Command,
  caller?: { kind: string; id: string },
): Promise<void> {
  try {
    await streams.execute(ws, (s) => decide(command, s), { caller });
  } catch (error) {
    if (!(error instanceof ApprovalError)) throw error;
  }
}

/**
 * Builds workspace `ws` with about `steps` commands of a seeded random walk (see the module comment).
 * `latch` makes it read restricted data two thirds of the way through (later writes elsewhere are refused).
 */
export async function buildWorkspace(
  store: EventStore,
  ws: string,
  options: { seed: number; steps?: number; latch?: boolean },
): Promise<void> {
  const streams = new WorkspaceStreams(store);
  const random = rng(options.seed);
  const pick = <T>(xs: T[]): T | undefined => xs[Math.floor(random() * xs.length)];
  const steps = options.steps ?? 80;
  const bindings = ["mem", "git"];
  await seedWorkspace(store, ws, bindings);
  const chats = [`chat-a-${ws}`, `chat-b-${ws}`, `chat-c-${ws}`];
  const started = new Set<string>();
  const locals: Record<string, string[]> = { mem: [], git: [] };
  let removed = false;
  for (let step = 0; step < steps; step++) {
    const state = await streams.state(ws);
    const actions = [...state.actions.values()];
    const pending = actions.filter((a) => a.status === ActionStatus.ACTION_STATUS_PENDING);
    const approved = actions.filter((a) => a.status === ActionStatus.ACTION_STATUS_APPROVED);
    const chat = pick(chats) as string;
    const caller = { kind: "agent", id: chat };
    const binding = removed ? "mem" : (pick(bindings) as string);
    const execution = `x${Math.floor(random() * 4)}`;
    if (options.latch && step === Math.floor((2 * steps) / 3)) {
      await run(
        streams,
        ws,
        {
          type: "RecordObservation",
          binding: "mem",
          description: {
            title: "read secrets",
            description: "",
            containsRestrictedData: true,
            kind: "mcp.tool.read",
            page: 0,
          },
          executionId: execution,
          requestId: "",
        },
        caller,
      );
      continue;
    }
    if (!removed && step === Math.floor((3 * steps) / 4)) {
      await run(streams, ws, {
        type: "RemoveBinding",
        binding: "git",
        removedBy: "user:alice",
        reason: "done",
      });
      removed = true;
      continue;
    }
    const r = random();
    if (r < 0.15) {
      await run(
        streams,
        ws,
        {
          type: "RecordObservation",
          binding,
          description: {
            title: `read ${step}`,
            description: "",
            containsRestrictedData: false,
            kind: "mcp.tool.read",
            page: 0,
          },
          executionId: execution,
          requestId: random() < 0.5 ? `req-${step}` : "",
        },
        caller,
      );
    } else if (r < 0.45) {
      const deps = locals[binding] as string[];
      const dependsOn = deps.length > 0 && random() < 0.5 ? [pick(deps) as string] : [];
      if (deps.length > 1 && random() < 0.3) dependsOn.push(pick(deps) as string);
      const localId = `l${step}`;
      deps.push(localId);
      await run(
        streams,
        ws,
        {
          type: "SubmitAction",
          binding,
          localId,
          description: description(`write ${step}`, dependsOn, random() < 0.3),
          payloadJson: JSON.stringify({ step }),
          executionId: execution,
        },
        random() < 0.1 ? { kind: "user", id: "bob" } : caller,
      );
      if (random() < 0.3) await run(streams, ws, { type: "AutoApproveNext", binding });
    } else if (r < 0.58 && pending.length > 0) {
      const a = pick(pending) as (typeof pending)[number];
      await run(streams, ws, {
        type: "Approve",
        actionIds: [a.id],
        decidedBy: "user:alice",
        includeDependencies: random() < 0.5,
      });
    } else if (r < 0.66 && pending.length > 0) {
      const a = pick(pending) as (typeof pending)[number];
      await run(streams, ws, {
        type: "Reject",
        actionId: a.id,
        decidedBy: "user:carol",
        reason: `no ${step}`,
      });
    } else if (r < 0.76 && approved.length > 0) {
      const a = pick(approved) as (typeof approved)[number];
      await run(streams, ws, { type: "ClaimApply", actionId: a.id, claimedBy: "worker-1" });
      if (random() < 0.7)
        await run(streams, ws, { type: "RecordApplied", actionId: a.id, resultJson: `{"ok":${step}}` });
      else
        await run(streams, ws, {
          type: "RecordApplyFailed",
          actionId: a.id,
          message: "boom",
          outcomeUnknown: random() < 0.5,
        });
    } else if (r < 0.82) {
      await run(streams, ws, {
        type: "SetAutoApprovalRule",
        binding,
        actionKindTag: "mcp.tool.add",
        enabled: random() < 0.6,
        setBy: "user:alice",
      });
    } else if (r < 0.88 && step > steps / 3) {
      // ChatStarted arrives after some of that chat's entries (as when a session's start is recorded late).
      const fresh = chats.find((c) => !started.has(c));
      const id = random() < 0.8 && fresh ? fresh : chat;
      started.add(id);
      const e = planned(
        "ChatStarted",
        { chatId: id, startedBy: `user:${id.slice(5, 6)}`, surface: "mcp-http", model: "" },
        "user:x",
      );
      await store.append(
        workspaceStreamId(ws),
        [{ type: e.type, data: encodeEventData(e), metadata: { actor: e.actor } }],
        "any",
      );
    } else {
      await store.append(
        workspaceStreamId(ws),
        [{ type: "CodeExecuted", data: { step }, metadata: { actor: "service:sandbox" } }],
        "any",
      );
    }
  }
}

/** `LogView.encode(toLogView(fold(stream)))`: what the read model's bytes must equal. */
export async function foldedLogBytes(store: EventStore, ws: string): Promise<Uint8Array> {
  return LogView.encode(toLogView(foldEvents(await store.readStream(workspaceStreamId(ws))))).finish();
}
