/** The session's tools, in the order `tools/list` shows them. Add a tool: one file, one entry here. */
import type { AgentTool } from "../tool-registry.ts";
import { executeCodeTool } from "./execute-code.ts";
import { requestConnectionTool } from "./request-connection.ts";
import { waitForDecisionsTool } from "./wait-for-decisions.ts";

export const AGENT_TOOLS: readonly AgentTool[] = [
  executeCodeTool as unknown as AgentTool,
  waitForDecisionsTool as unknown as AgentTool,
  requestConnectionTool as unknown as AgentTool,
];
