/**
 * Agent chats (kernel.proto `StartChat`): an MCP session records, before its first tool call, which
 * person opened it and over what, as ChatStarted in the workspace stream. Its reads and writes carry
 * caller {kind: "agent", id: chat_id}; the approval log folds ChatStarted to name that person.
 */
import { ChatStarted } from "@gatehouse/proto";
import { InvalidArgument } from "./domain/errors.ts";
import { checkPerson } from "./domain/membership.ts";
import type { Workspaces } from "./workspaces.ts";

/** The surfaces a chat starts over: the gateway's /mcp, or `gatehouse mcp` on stdio. */
export const CHAT_SURFACES = ["mcp-http", "mcp-stdio"] as const;

/**
 * Appends ChatStarted{chatId, startedBy, surface} (actor `startedBy`, caller {agent, chatId}).
 * @returns the stream revision of the appended event.
 * @throws InvalidArgument naming the field (empty or over 255-character chat_id, started_by not
 *   "user:<subject>", surface not one of CHAT_SURFACES); WorkspaceNotFound.
 */
export async function startChat(
  workspaces: Workspaces,
  req: { workspaceId: string; chatId: string; startedBy: string; surface: string },
): Promise<{ revision: number }> {
  if (!req.chatId || req.chatId.length > 255) {
    throw new InvalidArgument("chat_id is required (the MCP session id), at most 255 characters");
  }
  checkPerson("started_by", req.startedBy);
  if (!(CHAT_SURFACES as readonly string[]).includes(req.surface)) {
    throw new InvalidArgument(
      `surface must be one of ${CHAT_SURFACES.join(", ")}; got ${JSON.stringify(req.surface.slice(0, 40))}`,
    );
  }
  const event: ChatStarted = {
    chatId: req.chatId,
    startedBy: req.startedBy,
    surface: req.surface,
    model: "",
  };
  const { revision } = await workspaces.appendEventsAtRevision(
    req.workspaceId,
    req.startedBy,
    async () => ({ events: [{ type: "ChatStarted", data: ChatStarted.toJSON(event) }], result: undefined }),
    "the workspace changed too often while starting the chat; try again",
    { kind: "agent", id: req.chatId },
  );
  return { revision };
}
