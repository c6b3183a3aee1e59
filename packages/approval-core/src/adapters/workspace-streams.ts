/**
 * Workspace streams over the event-store port: a cached, caught-up projection per workspace and
 * the read–decide–append loop with expected revisions (docs/architecture.md "Events: the source of truth": every decision is an
 * append with an expected revision). Appends for one workspace are serialized in this process;
 * across processes the expected revision makes a stale decision fail, and it is re-decided.
 */
import {
  type EventStore,
  type NewEvent,
  type StoredEvent,
  StreamNotFound,
  WrongExpectedRevision,
} from "@gatehouse/event-store";
import { ApprovalError, WorkspaceNotFound } from "../domain/errors.ts";
import { encodeEventData, type PlannedEvent } from "../domain/events.ts";
import { evolve, initialState, type WorkspaceState } from "../domain/state.ts";
import { KeyedQueue } from "./keyed-queue.ts";

/** Prefix of workspace stream ids: `workspace-<id>`. */
export const WORKSPACE_STREAM_PREFIX = "workspace-";

/** The stream id of workspace `workspaceId`. */
export function workspaceStreamId(workspaceId: string): string {
  return `${WORKSPACE_STREAM_PREFIX}${workspaceId}`;
}

/** Metadata stamped on every appended event besides the actor. */
export interface AppendContext {
  /** Who caused the call (from the caller token, or the deciding person). */
  caller?: { kind: string; id: string } | undefined;
  correlationId?: string;
  causationId?: string;
  /**
   * The W3C trace context of the span making the append (`currentTraceparent()` of @gatehouse/telemetry),
   * stored in each event's metadata so later work (the approval, the apply) can link to it; absent when
   * tracing is off.
   */
  traceparent?: string | undefined;
}

/** How many times a decision is re-read and re-decided after WrongExpectedRevision. */
const MAX_ATTEMPTS = 8;

export class WorkspaceStreams {
  private readonly cache = new Map<string, WorkspaceState>();
  private readonly locks = new KeyedQueue();

  constructor(readonly store: EventStore) {}

  /**
   * The live projection of a workspace, caught up with the stream. The returned object is shared
   * and updated in place by later calls: read it synchronously, do not keep it.
   * @throws WorkspaceNotFound when the stream does not exist or does not start with WorkspaceCreated.
   */
  state(workspaceId: string): Promise<WorkspaceState> {
    return this.locks.run(workspaceId, () => this.catchUp(workspaceId));
  }

  /**
   * Reads the caught-up state, asks `decideFn` for events, appends them at the state's revision,
   * and folds them in. On WrongExpectedRevision (another process appended) it re-reads and
   * re-decides. `decideFn` must be pure; its typed errors propagate and nothing is appended —
   * except a refusal the log must show: an ApprovalError with `recorded` events (ActionRefused) has
   * those appended the same way, and is thrown once they are stored.
   * @returns the stored events (empty when `decideFn` returned none) and the state after them.
   * @throws the error of `decideFn`; WrongExpectedRevision after repeated conflicts; store errors.
   */
  execute(
    workspaceId: string,
    decideFn: (state: WorkspaceState) => PlannedEvent[],
    context: AppendContext = {},
  ): Promise<{ events: StoredEvent[]; state: WorkspaceState }> {
    return this.locks.run(workspaceId, async () => {
      for (let attempt = 1; ; attempt++) {
        const state = await this.catchUp(workspaceId);
        let planned: PlannedEvent[];
        let refusal: ApprovalError | undefined;
        try {
          planned = decideFn(state);
        } catch (err) {
          if (!(err instanceof ApprovalError) || err.recorded.length === 0) throw err;
          refusal = err;
          planned = err.recorded;
        }
        if (planned.length === 0) return { events: [], state };
        let stored: StoredEvent[];
        try {
          const result = await this.store.append(
            workspaceStreamId(workspaceId),
            planned.map((e) => toNewEvent(e, context)),
            state.revision,
          );
          stored = result.events;
        } catch (err) {
          if (!(err instanceof WrongExpectedRevision) || attempt >= MAX_ATTEMPTS) throw err;
          continue;
        }
        let next = state;
        for (const e of stored) next = evolve(next, e);
        this.cache.set(workspaceId, next);
        if (refusal) throw refusal;
        return { events: stored, state: next };
      }
    });
  }

  /**
   * Folds the stream from scratch up to `untilRevision` inclusive (all when undefined), without
   * touching the live cache. @throws WorkspaceNotFound.
   */
  async replay(workspaceId: string, untilRevision?: number): Promise<WorkspaceState> {
    const events = await this.read(workspaceId, 0);
    let state = initialState();
    for (const e of events) {
      if (untilRevision !== undefined && e.revision > untilRevision) break;
      state = evolve(state, e);
    }
    if (!state.exists) throw new WorkspaceNotFound(workspaceId);
    return state;
  }

  /** Ids of every workspace that has a stream. */
  async workspaceIds(): Promise<string[]> {
    const ids = await this.store.listStreams(WORKSPACE_STREAM_PREFIX);
    return ids.map((s) => s.slice(WORKSPACE_STREAM_PREFIX.length));
  }

  private async catchUp(workspaceId: string): Promise<WorkspaceState> {
    let state = this.cache.get(workspaceId) ?? initialState();
    const events = await this.read(workspaceId, state.revision + 1);
    for (const e of events) state = evolve(state, e);
    if (!state.exists) throw new WorkspaceNotFound(workspaceId);
    this.cache.set(workspaceId, state);
    return state;
  }

  private async read(workspaceId: string, fromRevision: number): Promise<StoredEvent[]> {
    try {
      return await this.store.readStream(workspaceStreamId(workspaceId), { fromRevision });
    } catch (err) {
      if (err instanceof StreamNotFound) throw new WorkspaceNotFound(workspaceId);
      throw err;
    }
  }
}

function toNewEvent(e: PlannedEvent, context: AppendContext): NewEvent {
  const metadata: NewEvent["metadata"] = { actor: e.actor, schemaVersion: 1 };
  if (context.caller) metadata.caller = context.caller;
  if (context.correlationId) metadata.correlationId = context.correlationId;
  if (context.causationId) metadata.causationId = context.causationId;
  if (context.traceparent) metadata.traceparent = context.traceparent;
  return { type: e.type, data: encodeEventData(e), metadata };
}
