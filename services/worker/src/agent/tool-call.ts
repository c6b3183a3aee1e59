/** Checking a tool call the model made before anything runs: which tool, valid JSON, its arguments. Pure. */
import { EXECUTE_CODE } from "./prompt.ts";
import { checkConnectionCall, REQUEST_CONNECTION } from "./request-connection.ts";

/**
 * A checked call: the snippet to run ("" for request_connection, whose arguments
 * `checkConnectionCall` gives), or the problem to tell the model.
 */
export type CheckedCall = { code: string; problem: "" } | { code: ""; problem: string };

const SHAPE = `{"code": "export default async (env) => { ...; return value; }"}`;

/** Checks `toolName` and its raw `argumentsJson`. */
export function checkToolCall(toolName: string, argumentsJson: string): CheckedCall {
  if (toolName === REQUEST_CONNECTION) {
    const checked = checkConnectionCall(argumentsJson);
    return checked.problem ? { code: "", problem: checked.problem } : { code: "", problem: "" };
  }
  if (toolName !== EXECUTE_CODE)
    return {
      code: "",
      problem: `There is no tool "${toolName.slice(0, 80)}"; call ${EXECUTE_CODE} with ${SHAPE}, or ${REQUEST_CONNECTION} to ask a person for a resource.`,
    };
  let args: unknown;
  try {
    args = JSON.parse(argumentsJson);
  } catch {
    return {
      code: "",
      problem: `The arguments are not valid JSON; call ${EXECUTE_CODE} again with ${SHAPE}.`,
    };
  }
  const code = (args as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.trim())
    return {
      code: "",
      problem: `The arguments have no "code" string; call ${EXECUTE_CODE} again with ${SHAPE}.`,
    };
  if (!/export\s+default\b/.test(code))
    return {
      code: "",
      problem: `"code" is not a module with a default export; send TypeScript of the form ${SHAPE}.`,
    };
  return { code, problem: "" };
}

/** The execution id of call `n` of `step` when it runs a snippet; "" for request_connection or a problem. */
export function executionIdOf(
  toolName: string,
  checked: CheckedCall,
  turnId: string,
  step: number,
  n: number,
): string {
  return checked.problem || toolName !== EXECUTE_CODE ? "" : `${turnId}.${step}.${n}`;
}
