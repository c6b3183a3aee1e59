/**
 * Read-side use cases shared by the gRPC handlers: live projection, replay, verify, watch.
 * No decision happens here.
 */

import {
  evolve,
  InvalidField,
  initialState,
  toLogEntry,
  toLogView,
  WorkspaceNotFound,
  type WorkspaceStreams,
  workspaceStreamId,
} from "@gatehouse/approval-core";
import { type StoredEvent, StreamNotFound, type Subscription, verifyStream } from "@gatehouse/event-store";
import { ActionStatus, type LogChange, type LogView, type VerifyResponse } from "@gatehouse/proto";

/** The live LogView (projection caught up with the stream). @throws WorkspaceNotFound. */
export async function liveLog(streams: WorkspaceStreams, workspaceId: string): Promise<LogView> {
  return toLogView(await streams.state(workspaceId));
}

/**
 * The LogView folded from scratch up to `untilRevision` inclusive; undefined = the whole stream
 * (approval.proto ReplayRequest). @throws WorkspaceNotFound; InvalidField for a negative revision.
 */
export async function replayLog(
  streams: WorkspaceStreams,
  workspaceId: string,
  untilRevision: number | undefined,
): Promise<LogView> {
  if (untilRevision !== undefined && untilRevision < 0) {
    throw new InvalidField(
      "until_revision",
      "must be a stream revision (0 or more), or absent for the whole stream",
    );
  }
  return toLogView(await streams.replay(workspaceId, untilRevision));
}

/** Recomputes the hash chain of the workspace stream. @throws WorkspaceNotFound. */
export async function verifyWorkspace(
  streams: WorkspaceStreams,
  workspaceId: string,
): Promise<VerifyResponse> {
  try {
    const r = await verifyStream(streams.store, workspaceStreamId(workspaceId));
    return {
      ok: r.ok,
      eventsChecked: r.eventsChecked,
      firstBadRevision: r.firstBadRevision,
      problem: r.problem,
    };
  } catch (err) {
    if (err instanceof StreamNotFound) throw new WorkspaceNotFound(workspaceId);
    throw err;
  }
}

/** The log id an event changes, if any. */
function touchedId(e: StoredEvent): number | undefined {
  if (e.type === "ObservationRecorded" || e.type === "ActionSubmitted" || e.type === "ActionRefused")
    return e.revision;
  const data = e.data as { actionId?: number; observationId?: number } | null;
  return data?.actionId ?? data?.observationId;
}

/**
 * Catch-up then live: folds the stream from the start (so records are complete) and calls `emit`
 * for every event with revision >= `fromRevision`, with the log entry it changed (if any).
 * @throws WorkspaceNotFound (before subscribing).
 */
export async function watchLog(
  streams: WorkspaceStreams,
  workspaceId: string,
  fromRevision: number,
  emit: (change: LogChange) => void,
  onError: (err: Error) => void,
): Promise<Subscription> {
  await streams.state(workspaceId);
  let state = initialState();
  return streams.store.subscribeToStream(workspaceStreamId(workspaceId), {
    after: -1,
    onEvent(e) {
      state = evolve(state, e);
      if (e.revision < fromRevision) return;
      const id = touchedId(e);
      emit({
        revision: e.revision,
        type: e.type,
        entry: id === undefined ? undefined : toLogEntry(state, id),
      });
    },
    onError,
  });
}

/** Ids of the pending actions of a folded workspace, in submission order. */
export async function pendingActionIds(streams: WorkspaceStreams, workspaceId: string): Promise<number[]> {
  const state = await streams.state(workspaceId);
  return [...state.actions.values()]
    .filter((a) => a.status === ActionStatus.ACTION_STATUS_PENDING)
    .map((a) => a.id);
}
