/**
 * Appending chat commands: read the workspace stream, fold the chats, decide each command in turn
 * (the decider is idempotent, so a retried activity appends nothing twice), append the events with
 * the revision read as the expected revision, and start over on a conflict.
 */
import {
  type ChatCommand,
  type ChatsState,
  decideChat,
  encodeChatEventData,
  evolveChats,
  foldChats,
} from "@gatehouse/agent-core";
import { type EventStore, type StoredEvent, WrongExpectedRevision } from "@gatehouse/event-store";

/** Actor of the chat events the agent loop appends. */
export const AGENT_ACTOR = "service:agent";

/** The workspace stream's events and their chat fold. */
export async function readChats(
  store: EventStore,
  workspaceId: string,
): Promise<{ events: StoredEvent[]; chats: ChatsState }> {
  const events = await store.readStream(`workspace-${workspaceId}`);
  return { events, chats: foldChats(events) };
}

/**
 * Decides and appends `commands` for chat `chatId`, as `by` (default: the agent, caller {agent, chatId};
 * a person's message: `{ actor: "user:<subject>", caller: { kind: "user", id: "<subject>" } }`).
 * @throws a ChatError from the decider; the store's error after 10 conflicts.
 */
export async function appendChat(
  store: EventStore,
  workspaceId: string,
  chatId: string,
  commands: ChatCommand[],
  by?: { actor: string; caller: { kind: string; id: string } },
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const { events, chats } = await readChats(store, workspaceId);
    const revision = events.at(-1)?.revision ?? -1;
    const planned = [];
    let state = chats;
    let next = revision;
    for (const c of commands) {
      for (const e of decideChat(c, state)) {
        planned.push(e);
        state = evolveChats(state, {
          revision: ++next,
          type: e.type,
          data: encodeChatEventData(e),
          metadata: { occurredAt: new Date().toISOString() },
        });
      }
    }
    if (planned.length === 0) return;
    try {
      await store.append(
        `workspace-${workspaceId}`,
        planned.map((e) => ({
          type: e.type,
          data: encodeChatEventData(e),
          metadata: by ?? { actor: AGENT_ACTOR, caller: { kind: "agent", id: chatId } },
        })),
        revision,
      );
      return;
    } catch (err) {
      if (!(err instanceof WrongExpectedRevision) || attempt >= 10) throw err;
    }
  }
}
