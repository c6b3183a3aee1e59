/**
 * NATS subjects of live change notices. docs/architecture.md "Events: the source of truth": NATS carries `gatehouse.ws.<id>.log`
 * notices to gateways and web sessions; the stream, never NATS, is the truth.
 */
import type { ChatDelta, LogNotice } from "@gatehouse/gateway-contract";
import { z } from "zod";

/** The subject every gateway subscribes to: one token for the workspace id. */
export const ALL_LOG_SUBJECTS = "gatehouse.ws.*.log";

/** The subject of every workspace's model-text deltas (the built-in agent streaming, chats.ts `ChatDelta`). */
export const ALL_CHAT_DELTA_SUBJECTS = "gatehouse.ws.*.chat-delta";

/** A workspace id that cannot be one NATS subject token (empty, or has `.`, `*`, `>` or whitespace). */
export class InvalidSubjectToken extends Error {
  override name = "InvalidSubjectToken";
  constructor(readonly workspaceId: string) {
    super(
      `workspace id ${JSON.stringify(workspaceId)} cannot be a NATS subject token (no ".", "*", ">" or whitespace allowed)`,
    );
  }
}

const TOKEN = /^[^.*>\s]+$/;

/**
 * `gatehouse.ws.<workspaceId>.log`.
 * @throws InvalidSubjectToken when the id is not a valid single subject token.
 */
export function logSubject(workspaceId: string): string {
  if (!TOKEN.test(workspaceId)) throw new InvalidSubjectToken(workspaceId);
  return `gatehouse.ws.${workspaceId}.log`;
}

/** Wire schema of a notice's payload (JSON): what the publisher sends and subscribers accept. */
export const LogNoticeSchema = z.object({
  workspaceId: z.string().regex(TOKEN),
  revision: z.number().int().min(0),
  type: z.string().min(1),
  publishedAtMs: z.number().finite().optional(),
}) satisfies z.ZodType<LogNotice>;

/**
 * `gatehouse.ws.<workspaceId>.chat-delta`.
 * @throws InvalidSubjectToken when the id is not a valid single subject token.
 */
export function chatDeltaSubject(workspaceId: string): string {
  if (!TOKEN.test(workspaceId)) throw new InvalidSubjectToken(workspaceId);
  return `gatehouse.ws.${workspaceId}.chat-delta`;
}

/** Wire schema of a chat delta's payload (JSON): what the worker sends and gateways accept. */
export const ChatDeltaSchema = z.object({
  workspaceId: z.string().regex(TOKEN),
  chatId: z.string().min(1),
  turnId: z.string().min(1),
  step: z.number().int().min(0),
  seq: z.number().int().min(0),
  text: z.string(),
}) satisfies z.ZodType<ChatDelta>;
