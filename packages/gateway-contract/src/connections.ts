/**
 * Connection requests over HTTP: an agent asks for a resource it has no binding for, and a person
 * accepts (introducing the resource, possibly narrower) or declines with a reason.
 */
import { z } from "zod";
import type { Caller } from "./caller.ts";

/** Where a connection request stands: decided once, accepted or declined. */
export type ConnectionRequestState = "pending" | "accepted" | "declined";

/**
 * A request to introduce a resource, made by an agent (`request_connection`) or a script. Accepting
 * it introduces the resource as a binding (`env.<binding>` in later executions); nothing reached
 * the resource before that. `url` and `reason` are untrusted text: show them inert.
 */
export interface ConnectionRequest {
  /** Its log position in the workspace stream (unique per workspace). */
  id: number;
  workspaceId: string;
  /** The resource as requested, normalized by its gatekeeper, e.g. "mcp://files#tool=read_text_file". */
  url: string;
  /** Why the agent says it needs it. */
  reason: string;
  /** Who asked: `agent` with the chat id, usually. */
  caller: Caller;
  /** ISO-8601. */
  requestedAt: string;
  state: ConnectionRequestState;
  /** Gatekeeper kind serving it, e.g. "mcp" or "git". */
  gatekeeper: string;
  /** Once accepted: the binding name and the URL it was introduced with (its fragment may be narrower). */
  binding: string;
  acceptedUrl: string;
  /** Once decided: who (subject) and when (ISO-8601). */
  decidedBy: string;
  decidedAt: string;
  /** Once declined: the person's reason. */
  declineReason: string;
}

/** GET /api/workspaces/:ws/connection-requests[?state=pending|accepted|declined] — in id order. */
export interface ConnectionRequestsResponse {
  requests: ConnectionRequest[];
}

/**
 * POST /api/workspaces/:ws/connection-requests/:id/accept (approver or admin) — introduces the
 * resource. `url`: the requested URL with the scope fragment you choose (e.g. fewer tools; the part
 * before `#` must stay the requested one; absent = as requested). `name`: the binding name (absent =
 * the gatekeeper's default). 409 when the request was decided already (the message names the first
 * decision) or the name is bound.
 */
export const AcceptConnectionBody = z
  .object(
    {
      url: z
        .string({ error: 'url is text, e.g. {"url": "mcp://files#tool=read_text_file"}' })
        .trim()
        .max(2048, "url is at most 2048 characters")
        .optional(),
      name: z
        .string({ error: 'name is text, e.g. {"name": "FILES"}' })
        .trim()
        .regex(
          /^([A-Za-z][A-Za-z0-9_]{0,62})?$/,
          "name is a binding name: letters, digits and '_', starting with a letter, e.g. FILES",
        )
        .optional(),
    },
    {
      error:
        'send a JSON object, e.g. {"url": "mcp://files#tool=read_text_file", "name": "FILES"} (both optional)',
    },
  )
  .strict();
export type AcceptConnectionBody = z.input<typeof AcceptConnectionBody>;

/** POST /api/workspaces/:ws/connection-requests/:id/decline (approver or admin) — a reason is required. */
export const DeclineConnectionBody = z
  .object(
    {
      reason: z
        .string({ error: 'a reason is required: send {"reason": "why"} so the agent can read it' })
        .trim()
        .min(1, "a reason is required: say why so the agent can read it")
        .max(2000, "a reason is at most 2000 characters"),
    },
    { error: 'send a JSON object, e.g. {"reason": "why"}' },
  )
  .strict();
export type DeclineConnectionBody = z.input<typeof DeclineConnectionBody>;

/** Response of accept and decline: the request as it stands now. */
export interface ConnectionDecisionResult {
  request: ConnectionRequest;
}
