/**
 * PrepareRevert for MCP (gatekeeper.proto `Gatekeeper.PrepareRevert`): always refused.
 *
 * An MCP tool call has no generic inverse. The protocol has no notion of undo, tool annotations
 * say nothing about which tool reverses which, and guessing (say, `delete_entities` for
 * `create_entities`) could destroy data the original call did not create. So the gatekeeper stages
 * nothing and answers FAILED_PRECONDITION; the way back is the agent making the compensating
 * call, which becomes a pending action approved like any other write.
 */
import { oneLine } from "@gatehouse/gatekeeper-kit";
import type { PrepareRevertRequest, PrepareRevertResponse } from "@gatehouse/proto";
import { parseStagedPayload } from "./apply.ts";
import { InvalidRequest, RevertUnsupported } from "./errors.ts";
import { BINDING_NAME } from "./resource-url.ts";

/**
 * Checks the request, then refuses it.
 * @throws InvalidRequest naming `binding`, `action_id` or `payload_json` when the request is
 *   malformed (not an action this gatekeeper staged);
 *   RevertUnsupported (FAILED_PRECONDITION) otherwise, naming the action, its tool and the fix.
 */
export async function prepareRevert(req: PrepareRevertRequest): Promise<PrepareRevertResponse> {
  if (!BINDING_NAME.test(req.binding)) {
    throw new InvalidRequest("binding must be the action's binding name, e.g. MEMORY");
  }
  if (!Number.isSafeInteger(req.actionId) || req.actionId <= 0) {
    throw new InvalidRequest("action_id must be the log id (a positive integer) of the applied action");
  }
  const { tool } = parseStagedPayload(req.payloadJson);
  throw new RevertUnsupported(
    `action ${req.actionId} (${oneLine(tool)} on ${oneLine(req.binding)}) cannot be reverted: an MCP tool call has no generic inverse. ` +
      "Ask the agent to make the compensating call (the tool that undoes it); that call is submitted for approval like any write.",
  );
}
