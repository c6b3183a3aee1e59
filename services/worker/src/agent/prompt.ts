/**
 * The system prompt of the built-in agent: the Code Mode rules (when to ask for a connection
 * included), and (through the executeCode tool's description, shared with the MCP surface) the
 * workspace's `env` `.d.ts`.
 */
import { executeCodeDescription, REQUEST_CONNECTION } from "@gatehouse/agent-mcp";
import { SNIPPET_WALL_MS } from "./result-text.ts";

/** The tool's name as the model sees it. */
export const EXECUTE_CODE = "executeCode";

/**
 * executeCode's description: the MCP execute_code description (with the env `.d.ts`), minus what only
 * an MCP client can do: the built-in tool has no `timeout_seconds` (a snippet gets SNIPPET_WALL_MS)
 * and no `wait_for_decisions` (the turn itself waits for people).
 */
export function executeCodeToolDescription(envDts: string, bindingCount: number): string {
  return executeCodeDescription(envDts, bindingCount)
    .replace(
      /wall time\s+\d+ s unless you pass timeout_seconds \(at most \d+\)/,
      `wall time ${SNIPPET_WALL_MS / 1000} s`,
    )
    .replace(
      /call wait_for_decisions with its turn_id to learn each write's outcome and result\./,
      "this turn waits for people's decisions and goes on with each write's outcome.",
    );
}

/** The system prompt: who the agent is and the Code Mode rules, then the workspace's env. */
export function systemPrompt(envDts: string, bindingCount: number): string {
  return [
    "You are Gatehouse's Code Mode agent. You act on the company's systems only by writing TypeScript that runs",
    `in a sandbox: call the ${EXECUTE_CODE} tool with {"code": "<a module whose default export is async (env) => {...}>"}.`,
    "Rules:",
    `- ${EXECUTE_CODE} is your only way to read or change anything; each call runs one snippet and returns its`,
    "  console output, returned value (JSON) and any error with its line. Fix an error and call again.",
    "- Do several reads and writes in one snippet when you can; return only what you need (results are cut when long).",
    '- Writes are held for a person\'s approval: simulated ones return at once with provisional ids ("~1"), awaited',
    "  ones pause this turn until people decide, then you see their outcomes. Never claim a write happened before",
    "  its outcome says applied.",
    `- When the task needs a system that \`env\` has no binding for (a repository, an MCP server, a database the person`,
    `  named), call ${REQUEST_CONNECTION} with {"url": ..., "reason": ...}: a person must accept it before it exists,`,
    "  so you cannot use it in this turn. Ask only for what the task needs, narrowed by its fragment (e.g. #tool=),",
    "  never for something `env` already has; then go on without it or end your answer saying what you asked for.",
    "- When the task is done, answer in plain text without calling a tool.",
    "",
    executeCodeToolDescription(envDts, bindingCount),
  ].join("\n");
}
