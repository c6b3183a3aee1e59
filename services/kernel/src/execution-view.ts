/**
 * One execution as its workspace stream recorded it, for approvers: the snippet and console kept in
 * CodeExecuted, the actions it submitted (ActionSubmitted carrying its id) and, for a built-in agent
 * turn's execution ("<turnId>.<step>.<n>"), the person's chat message that started the turn.
 */
import type { EventStore } from "@gatehouse/event-store";
import { ActionSubmitted, ChatUserMessage, CodeExecuted, type ExecutionView } from "@gatehouse/proto";
import { streamOf } from "./domain/workspace.ts";

/** No finished execution with this id in the workspace (NOT_FOUND). */
export class ExecutionNotFound extends Error {
  constructor(workspaceId: string, executionId: string) {
    super(`execution "${executionId}" not found in workspace ${workspaceId}`);
    this.name = "ExecutionNotFound";
  }
}

/** The turn id of a built-in agent execution id ("<turnId>.<step>.<n>"), or undefined. */
function agentTurnOf(executionId: string): string | undefined {
  const m = /^(.+)\.\d+\.\d+$/.exec(executionId);
  return m?.[1];
}

/**
 * Reads the workspace stream and assembles the view of `executionId` (its last CodeExecuted).
 * @throws ExecutionNotFound when no CodeExecuted carries the id; the store's errors.
 */
export async function executionView(
  store: EventStore,
  workspaceId: string,
  executionId: string,
): Promise<ExecutionView> {
  const turnId = agentTurnOf(executionId);
  const events = await store.readStream(streamOf(workspaceId), { fromRevision: 0 });
  let view: ExecutionView | undefined;
  let chatMessage = "";
  const actionIds: number[] = [];
  for (const e of events) {
    if (e.type === "CodeExecuted") {
      const c = CodeExecuted.fromJSON(e.data);
      if (c.executionId !== executionId) continue;
      view = {
        executionId,
        code: c.code,
        codeTruncated: c.codeTruncated,
        console: c.console,
        consoleTruncated: c.consoleTruncated,
        ok: c.ok,
        error: c.error,
        durationMs: c.durationMs,
        executedAt: e.metadata.occurredAt,
        bindings: c.bindings,
        chatMessage: "",
        actionIds: [],
      };
    } else if (e.type === "ActionSubmitted") {
      if (ActionSubmitted.fromJSON(e.data).executionId === executionId) actionIds.push(e.revision);
    } else if (turnId && e.type === "ChatUserMessage") {
      const m = ChatUserMessage.fromJSON(e.data);
      if (m.turnId === turnId) chatMessage = m.text;
    }
  }
  if (!view) throw new ExecutionNotFound(workspaceId, executionId);
  return { ...view, chatMessage, actionIds };
}
