// @ts-check
/**
 * What an agent does: keeps one MCP session per workspace (per VU, like one chat) and runs snippets
 * through execute_code that read (open_nodes: an observation) and write (create_entities: a pending
 * action for a person). The SLO figure is the tools/call round trip as the agent sees it.
 */
import { check } from "k6";
import { Counter, Rate, Trend } from "k6/metrics";
import { AGENT_TOKEN, BASE_URL } from "./config.js";
import { McpSession } from "./mcp.js";

/** execute_code round trip over /mcp, ms (the tools/call POST, as the agent sees it). */
export const executeCodeDuration = new Trend("execute_code_duration", true);
/** Share of execute_code calls that ran the snippet to its end (no tool error, no HTTP error). */
export const executeCodeOk = new Rate("execute_code_ok");
/** Writes the snippets submitted (pending actions). */
export const writesSubmitted = new Counter("writes_submitted");
/** MCP session start (initialize + initialized), ms. */
export const mcpOpenDuration = new Trend("mcp_open_duration", true);

/** @type {Map<string, McpSession>} this VU's sessions by workspace id */
const sessions = new Map();

/**
 * This VU's session on `workspaceId`, opened on first use.
 * @param {string} workspaceId
 */
export function sessionFor(workspaceId) {
  let s = sessions.get(workspaceId);
  if (!s) {
    s = new McpSession(BASE_URL, workspaceId, AGENT_TOKEN);
    const began = Date.now();
    s.open();
    mcpOpenDuration.add(Date.now() - began);
    sessions.set(workspaceId, s);
  }
  return s;
}

/**
 * A snippet that reads one entity and submits `writes` new ones, one write each.
 * @param {string} binding e.g. "MEMORY"
 * @param {string} prefix unique per call (entity names)
 * @param {number} writes
 */
export function readWriteSnippet(binding, prefix, writes) {
  return `export default async (env: any) => {
  const seen = await env.${binding}.open_nodes({ names: [${JSON.stringify(`${prefix}-0`)}] });
  const ids: number[] = [];
  for (let i = 0; i < ${writes}; i++) {
    const w = await env.${binding}.create_entities({
      entities: [{ name: ${JSON.stringify(prefix)} + "-" + i, entityType: "loadtest", observations: ["written by a load test"] }],
    });
    ids.push(w.actionId);
  }
  return { read: seen !== undefined, ids };
};`;
}

/**
 * Runs one read-only snippet in `ws` (not measured: its own session, closed after), so the workspace's
 * sandbox is warm before the measured snippets. @throws Error when it fails.
 * @param {{id: string, binding: string}} ws
 */
export function warmUp(ws) {
  const session = new McpSession(BASE_URL, ws.id, AGENT_TOKEN);
  session.open();
  try {
    const call = session.callTool(
      "execute_code",
      {
        code: `export default async (env: any) => (await env.${ws.binding}.open_nodes({ names: ["warm-up"] })) !== undefined;`,
      },
      { timeout: "120s" },
    );
    if (call.error || call.result?.structuredContent?.ok !== true)
      throw new Error(
        `the warm-up snippet in ${ws.id} failed: ${call.error || JSON.stringify(call.result?.content)}`,
      );
  } finally {
    session.close();
  }
}

/**
 * Runs one read-and-write snippet in `ws` as this VU's agent; returns the submitted action ids
 * (empty when the call failed, which the checks and execute_code_ok count).
 * @param {{id: string, binding: string}} ws
 * @param {number} writes
 * @returns {number[]}
 */
export function runReadWrite(ws, writes) {
  const session = sessionFor(ws.id);
  const prefix = `lt-${__VU}-${__ITER}-${Date.now().toString(36)}`;
  const call = session.callTool(
    "execute_code",
    { code: readWriteSnippet(ws.binding, prefix, writes), timeout_seconds: 60 },
    {
      timeout: "90s",
    },
  );
  const out = call.result?.structuredContent;
  const ok = check(call, {
    "execute_code answered": (c) => c.error === "",
    "snippet ran to its end": (c) => c.result?.isError === false && out?.ok === true,
    "writes were submitted": () =>
      Array.isArray(out?.returnValue?.ids) && out.returnValue.ids.length === writes,
  });
  executeCodeOk.add(ok);
  // Every call counts, failed ones too (a timed-out call counts its whole wait).
  executeCodeDuration.add(call.res.timings.duration);
  if (!ok) return [];
  writesSubmitted.add(writes);
  return out.returnValue.ids;
}
