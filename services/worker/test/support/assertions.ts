/** Reading the stream back in tests. */
import { ActionNotFound, type ActionState, foldEvents } from "@gatehouse/approval-core";
import type { EventStore } from "@gatehouse/event-store";

/** Types of the stream events about `actionId`, in order. */
export async function eventTypesOf(
  store: EventStore,
  workspaceId: string,
  actionId: number,
): Promise<string[]> {
  const events = await store.readStream(`workspace-${workspaceId}`);
  return events
    .filter((e) => e.revision === actionId || (e.data as { actionId?: number }).actionId === actionId)
    .map((e) => e.type);
}

/** The action as folded from the whole stream (the log projection). */
export async function projected(
  store: EventStore,
  workspaceId: string,
  actionId: number,
): Promise<ActionState> {
  const state = foldEvents(await store.readStream(`workspace-${workspaceId}`));
  const a = state.actions.get(actionId);
  if (!a) throw new ActionNotFound(workspaceId, actionId);
  return a;
}

/** Every message in an error's cause chain, joined (Temporal wraps the handler's failure). */
export function messagesOf(err: unknown): string {
  const out: string[] = [];
  let e: unknown = err;
  while (e instanceof Error) {
    out.push(e.message);
    e = e.cause;
  }
  return out.join(" <- ");
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
