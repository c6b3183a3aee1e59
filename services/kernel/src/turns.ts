/**
 * Await-decision turns as the kernel reports them: a fold of the workspace stream's
 * TurnSuspended / TurnResumed / TurnCompleted events for one turn id (the id of the execution
 * that suspended). `waitForTurn` subscribes to the stream until the turn leaves "suspended".
 */
import type { EventStore, StoredEvent } from "@gatehouse/event-store";
import { type Turn, TurnCompleted, TurnResumed, TurnSuspended } from "@gatehouse/proto";
import { InvalidArgument, KernelError } from "./domain/errors.ts";
import { streamOf } from "./domain/workspace.ts";

/** No TurnSuspended for this id in the workspace. */
export class TurnNotFound extends KernelError {
  override name = "TurnNotFound";
  constructor(readonly turnId: string) {
    super(`turn "${turnId}" does not exist in this workspace; a turn id is the execution id that suspended`);
  }
}

/** Folds one event into the turn, or returns it unchanged when the event is about something else. */
export function evolveTurn(turn: Turn | undefined, event: StoredEvent, workspaceId: string, turnId: string) {
  switch (event.type) {
    case "TurnSuspended": {
      const e = TurnSuspended.fromJSON(event.data);
      if (e.turnId !== turnId) return turn;
      return {
        workspaceId,
        turnId,
        state: "suspended",
        awaitedActionIds: e.actionIds,
        results: [],
        reason: "",
      };
    }
    case "TurnResumed": {
      const e = TurnResumed.fromJSON(event.data);
      if (e.turnId !== turnId || !turn) return turn;
      return { ...turn, state: "resumed", results: e.results };
    }
    case "TurnCompleted": {
      const e = TurnCompleted.fromJSON(event.data);
      if (e.turnId !== turnId || !turn) return turn;
      return { ...turn, state: "completed", results: e.results, reason: e.reason };
    }
    default:
      return turn;
  }
}

/** The turn's current state. @throws TurnNotFound, InvalidArgument (empty id). */
export async function loadTurn(store: EventStore, workspaceId: string, turnId: string): Promise<Turn> {
  if (!turnId)
    throw new InvalidArgument("turn_id is required (the execution id printed by `gatehouse exec`)");
  let turn: Turn | undefined;
  for (const e of await store.readStream(streamOf(workspaceId)))
    turn = evolveTurn(turn, e, workspaceId, turnId);
  if (!turn) throw new TurnNotFound(turnId);
  return turn;
}

/**
 * Resolves once the turn resumed or completed, or with its current state when `signal` aborts.
 * @throws TurnNotFound.
 */
export async function waitForTurn(
  store: EventStore,
  workspaceId: string,
  turnId: string,
  signal: AbortSignal,
): Promise<Turn> {
  let turn = await loadTurn(store, workspaceId, turnId);
  if (turn.state !== "suspended") return turn;
  const from = await store.streamRevision(streamOf(workspaceId));
  return new Promise<Turn>((resolve, reject) => {
    const sub = store.subscribeToStream(streamOf(workspaceId), {
      after: from,
      onEvent: (e) => {
        turn = evolveTurn(turn, e, workspaceId, turnId) ?? turn;
        if (turn.state !== "suspended") done();
      },
      onError: (err) => {
        void sub.close();
        reject(err);
      },
    });
    const done = () => {
      signal.removeEventListener("abort", done);
      void sub.close();
      resolve(turn);
    };
    signal.addEventListener("abort", done, { once: true });
  });
}
