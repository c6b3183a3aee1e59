/**
 * Appending chat commands: read the workspace's chats (this process's cache, caught up to the
 * stream's head), decide each command in turn (the decider is idempotent, so a retried activity
 * appends nothing twice), append the events with the revision read as the expected revision, and
 * start over on a conflict.
 */
import { type ChatCommand, decideChat, encodeChatEventData, evolveChats } from "@gatehouse/agent-core";
import { type EventStore, WrongExpectedRevision } from "@gatehouse/event-store";
import { type ChatsSnapshot, chatsCacheOf } from "./chats-cache.ts";

/** Actor of the chat events the agent loop appends. */
export const AGENT_ACTOR = "service:agent";

/**
 * The workspace's chats as of the stream's head (read through this process's cache of `store`: only
 * events after the cached revision are read). The snapshot is shared: do not change it.
 * @throws the store's StreamNotFound when the workspace stream has no events.
 */
export function readChats(store: EventStore, workspaceId: string): Promise<ChatsSnapshot> {
  return chatsCacheOf(store).read(workspaceId);
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
    const { chats } = await readChats(store, workspaceId);
    const revision = chats.revision;
    const planned = [];
    let state = chats;
    let next = revision;
    for (const [n, c] of commands.entries()) {
      for (const e of decideChat(c, state)) {
        planned.push(e);
        // The next command is decided on this one's events: fold them into a copy (the snapshot is shared).
        if (n === commands.length - 1) continue;
        if (state === chats) state = structuredClone(chats);
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
