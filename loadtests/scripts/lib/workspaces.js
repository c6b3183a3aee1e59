// @ts-check
/**
 * The load test's workspaces, made through public routes only (so the scripts run against any
 * deployment): the approver creates each workspace and adds the agent's person; the agent asks for the
 * resource with request_connection over /mcp; the approver accepts it in the inbox's route.
 */
import { sleep } from "k6";
import { apiGet, apiPost, jsonOf } from "./api.js";
import { AGENT_TOKEN, APPROVER_TOKEN, BASE_URL, RESOURCE_URL, RUN_LABEL } from "./config.js";
import { McpSession } from "./mcp.js";

/**
 * @typedef {{id: string, binding: string}} LoadWorkspace a workspace and the binding name its agents use
 */

/**
 * "user:<subject>" of the person `token` names.
 * @param {string} token
 * @param {string} variable the variable the token came from, named when the gateway refuses it
 * @throws Error naming `variable` when the gateway does not accept the token (401/403).
 */
export function personOf(token, variable) {
  const res = apiGet(token, "/api/me", `me (the person of ${variable})`);
  if (res.status === 401 || res.status === 403)
    throw new Error(
      `the gateway refused ${variable} (GET /api/me answered ${res.status}): ${String(res.body).slice(0, 200)}`,
    );
  return `user:${jsonOf(res, "GET /api/me").subject}`;
}

/**
 * Creates `count` workspaces for `kind` (e.g. "agents"), each with the resource connected.
 * @param {string} kind
 * @param {number} count
 * @returns {LoadWorkspace[]}
 * @throws Error naming the step that was refused.
 */
export function createWorkspaces(kind, count) {
  const agent = personOf(AGENT_TOKEN, "GATEHOUSE_AGENT_TOKEN");
  const approver = personOf(APPROVER_TOKEN, "GATEHOUSE_APPROVER_TOKEN");
  const stamp = Date.now().toString(36);
  /** @type {LoadWorkspace[]} */
  const out = [];
  for (let i = 0; i < count; i++) {
    const members = agent === approver ? [] : [agent];
    const ws = jsonOf(
      apiPost(
        APPROVER_TOKEN,
        "/api/workspaces",
        { name: `${RUN_LABEL}-${kind}-${stamp}-${i}`, members },
        "create workspace",
      ),
      "POST /api/workspaces",
    );
    out.push({ id: ws.id, binding: connect(ws.id) });
  }
  return out;
}

/**
 * The agent asks for RESOURCE_URL, the approver accepts; returns the binding name.
 * @param {string} workspaceId
 */
function connect(workspaceId) {
  const session = new McpSession(BASE_URL, workspaceId, AGENT_TOKEN);
  session.open();
  try {
    const asked = session.callTool("request_connection", {
      url: RESOURCE_URL,
      reason: "load test: agents read and write through it",
      timeout_seconds: 1,
    });
    if (asked.error || asked.result?.isError)
      throw new Error(`request_connection failed: ${asked.error || JSON.stringify(asked.result?.content)}`);
    const requestId = asked.result.structuredContent.requestId;
    const accepted = jsonOf(
      apiPost(
        APPROVER_TOKEN,
        `/api/workspaces/${workspaceId}/connection-requests/${requestId}/accept`,
        {},
        "accept connection",
      ),
      "POST …/connection-requests/:id/accept",
    );
    // The agent learns the binding as an agent does: request_connection with the request id.
    for (let tries = 0; tries < 30; tries++) {
      const seen = session.callTool("request_connection", { request_id: requestId, timeout_seconds: 1 });
      if (seen.result?.structuredContent?.state === "accepted") return seen.result.structuredContent.binding;
      sleep(0.5);
    }
    throw new Error(
      `connection request ${requestId} was accepted (${accepted.request.binding}) but the agent never saw it`,
    );
  } finally {
    session.close();
  }
}
