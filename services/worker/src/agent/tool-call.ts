/** Checking a tool call the model made before anything runs: which tool, valid JSON, a snippet. Pure. */
import { EXECUTE_CODE } from "./prompt.ts";

/** A checked call: the snippet to run, or the problem to tell the model. */
export type CheckedCall = { code: string; problem: "" } | { code: ""; problem: string };

const SHAPE = `{"code": "export default async (env) => { ...; return value; }"}`;

/** Checks `toolName` and its raw `argumentsJson`. */
export function checkToolCall(toolName: string, argumentsJson: string): CheckedCall {
  if (toolName !== EXECUTE_CODE)
    return {
      code: "",
      problem: `There is no tool "${toolName.slice(0, 80)}"; call ${EXECUTE_CODE} with ${SHAPE}.`,
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
