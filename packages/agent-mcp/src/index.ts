/**
 * Gatehouse as an MCP server for agents: the Code Mode tools (`execute_code`,
 * `wait_for_decisions`, `request_connection`) over one workspace's bindings. See `createAgentMcpServer`.
 */

export { kernelErrorText } from "./kernel-errors.ts";
export type { AgentMcpLogger, AgentMcpOptions } from "./options.ts";
export { executeCodeContent, executeResultText, turnContent, turnResultText } from "./result-text.ts";
export { type AgentMcpSession, createAgentMcpServer } from "./server.ts";
export { type AgentTool, toolError } from "./tool-registry.ts";
export {
  DEFAULT_TIMEOUT_SECONDS,
  executeCodeDescription,
  MAX_SNIPPET_BYTES,
  MAX_TIMEOUT_SECONDS,
} from "./tools/execute-code.ts";
export {
  CONNECTION_REQUEST_PURPOSE,
  type ConnectionRequestArgs,
  type ConnectionTextOptions,
  connectionArgsProblem,
  connectionRequestArgs,
  connectionResultText,
  REQUEST_CONNECTION,
} from "./tools/request-connection.ts";
export { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS, SLICE_SECONDS } from "./tools/wait-slices.ts";
