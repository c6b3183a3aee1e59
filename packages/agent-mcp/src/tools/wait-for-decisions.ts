/**
 * `wait_for_decisions`: blocks until a suspended turn resumes (every awaited write applied) or
 * completes (one was rejected or failed), or until `timeout_seconds` pass. It asks
 * Kernel.GetTurn(wait) in slices of at most `SLICE_SECONDS`, and after each slice sends
 * `notifications/progress` when the request carries a progressToken.
 */

import type { Turn } from "@gatehouse/proto";
import { z } from "zod";
import { getTurn } from "../kernel-calls.ts";
import { kernelErrorText } from "../kernel-errors.ts";
import { turnContent, turnResultText } from "../result-text.ts";
import { type AgentTool, type ToolExtra, toolError } from "../tool-registry.ts";
import {
  DEFAULT_WAIT_SECONDS,
  MAX_WAIT_SECONDS,
  SLICE_SECONDS,
  waitInSlices,
  waitSecondsInput,
} from "./wait-slices.ts";

const input = z.object({
  turn_id: z.string().min(1).describe("The turn id execute_code returned for awaited writes"),
  timeout_seconds: waitSecondsInput("people's decisions"),
});

/** The shape of `structuredContent` (TurnContent in result-text.ts). */
export const waitForDecisionsOutput = z.object({
  turnId: z.string(),
  state: z
    .string()
    .describe('"suspended" (still waiting), "resumed" (every awaited write applied) or "completed"'),
  stillWaiting: z.boolean().describe("true when the wait timed out: call wait_for_decisions again"),
  awaitedActionIds: z.array(z.number()),
  results: z.array(
    z.object({
      actionId: z.number(),
      status: z
        .string()
        .describe('"applied", "failed" or "rejected" ("pending"/"approved" if undecided at completion)'),
      result: z.unknown().optional().describe("the system's result (JSON) once applied"),
      reason: z.string().describe("the rejection reason or failure message"),
    }),
  ),
  reason: z.string().describe("why the turn completed without resuming"),
});

/** Waits on the turn until it leaves "suspended" (see waitInSlices). @throws ServiceError (NOT_FOUND for an unknown turn), AbortError. */
async function waitForTurn(
  ctx: Parameters<AgentTool["call"]>[1],
  turnId: string,
  seconds: number,
  extra: ToolExtra,
): Promise<Turn> {
  const req = { workspaceId: ctx.workspaceId, turnId, wait: false };
  const now = () => getTurn(ctx.kernel, req, 30_000, extra.signal);
  return waitInSlices(await now(), {
    seconds,
    extra,
    now,
    waitUpTo: (ms) => getTurn(ctx.kernel, { ...req, wait: true }, ms, extra.signal),
    settled: (turn) => turn.state !== "suspended",
    progress: (turn, waited) =>
      `waiting for a person to decide actions ${turn.awaitedActionIds.join(", ")} (${Math.round(waited)} of ${seconds} s)`,
  });
}

export const waitForDecisionsTool: AgentTool<typeof input> = {
  name: "wait_for_decisions",
  input,
  output: waitForDecisionsOutput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async listing() {
    return {
      title: "Wait for people to decide awaited writes",
      description: [
        "Wait until a person has decided every awaited write of a turn that execute_code suspended, then return",
        "each write's outcome (applied with the system's result, rejected with the reason, or failed).",
        `Waits at most timeout_seconds (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}), sending progress`,
        `notifications every ${SLICE_SECONDS} s when the request has a progressToken; if people have not decided by then,`,
        "it says the turn is still waiting: call it again with the same turn_id.",
      ].join("\n"),
    };
  },
  async call({ turn_id, timeout_seconds }, ctx, extra) {
    const seconds = timeout_seconds ?? DEFAULT_WAIT_SECONDS;
    const started = Date.now();
    let turn: Turn;
    try {
      turn = await waitForTurn(ctx, turn_id, seconds, extra);
    } catch (err) {
      return toolError(kernelErrorText(err, "wait_for_decisions"));
    }
    const waited = Math.round((Date.now() - started) / 1000);
    return {
      content: [{ type: "text", text: turnResultText(turn, waited) }],
      structuredContent: turnContent(turn) as unknown as Record<string, unknown>,
    };
  },
};
