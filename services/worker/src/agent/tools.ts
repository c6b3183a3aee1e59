/** The tools the built-in agent's model is offered at each step: executeCode and request_connection. */
import { jsonSchema, type ToolSet, tool } from "ai";
import { EXECUTE_CODE, executeCodeToolDescription } from "./prompt.ts";
import {
  REQUEST_CONNECTION,
  requestConnectionInputSchema,
  requestConnectionToolDescription,
} from "./request-connection.ts";

/** The tool set for a workspace whose `env` is `envDts` (with `bindingCount` bindings). */
export function agentTools(envDts: string, bindingCount: number): ToolSet {
  return {
    [EXECUTE_CODE]: tool({
      description: executeCodeToolDescription(envDts, bindingCount),
      inputSchema: jsonSchema({
        type: "object",
        properties: {
          code: { type: "string", description: "export default async (env) => { ... }" },
        },
        required: ["code"],
      }),
    }),
    [REQUEST_CONNECTION]: tool({
      description: requestConnectionToolDescription(EXECUTE_CODE),
      inputSchema: jsonSchema(requestConnectionInputSchema as Parameters<typeof jsonSchema>[0]),
    }),
  };
}
