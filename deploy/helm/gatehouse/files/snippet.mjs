// helm test: one snippet end to end. Signs in at the gateway with $TOKEN, creates a workspace, opens an
// MCP session on /mcp?workspace=<id> and calls execute_code: kernel -> sandbox-runner (gVisor) and back.
// Prints the execution's result; fails unless the snippet returned { answer: 42 }.
const base = process.env.GATEWAY_URL;
const auth = { authorization: `Bearer ${process.env.TOKEN}` };
const deadline = Date.now() + Number(process.env.TEST_DEADLINE_S ?? 120) * 1000;

async function call(path, body, headers = {}) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: {
      ...auth,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...headers,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`POST ${path} -> HTTP ${res.status}: ${text.slice(0, 500)}`);
  // Streamable HTTP answers JSON or an SSE stream whose data lines carry the JSON-RPC answer.
  const json = text.trim().startsWith("{")
    ? text
    : text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5))
        .pop();
  return { res, body: json ? JSON.parse(json) : undefined };
}

async function main() {
  let ws;
  for (;;) {
    try {
      ws = (await call("/api/workspaces", { name: "helm-test" })).body;
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  const mcp = `/mcp?workspace=${encodeURIComponent(ws.id)}`;
  const init = await call(mcp, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "helm-test", version: "1" },
    },
  });
  const session = { "mcp-session-id": init.res.headers.get("mcp-session-id") ?? "" };
  await call(mcp, { jsonrpc: "2.0", method: "notifications/initialized" }, session);
  const code = "export default async () => ({ answer: 6 * 7 })";
  // A sandbox runner that is still starting answers SandboxUnavailable: asked again until the deadline.
  for (let id = 2; ; id++) {
    const out = await call(
      mcp,
      { jsonrpc: "2.0", id, method: "tools/call", params: { name: "execute_code", arguments: { code } } },
      session,
    );
    const result = out.body?.result?.structuredContent;
    if (result?.error?.name === "SandboxUnavailable" && Date.now() <= deadline) {
      await new Promise((r) => setTimeout(r, 2000));
      continue;
    }
    console.log(JSON.stringify({ workspace: ws.id, result }));
    if (result?.error?.name === "SandboxUnavailable") {
      throw new Error(
        `the sandbox runner did not answer within ${process.env.TEST_DEADLINE_S ?? 120} s: ${result.error.message} (kubectl describe pod -l app.kubernetes.io/component=sandbox-runner: ErrImagePull/ErrImageNeverPull = the sandbox image is missing on the node; a RuntimeClass error = gVisor is missing there)`,
      );
    }
    if (!result?.ok || result.returnValue?.answer !== 42) {
      throw new Error(`execute_code did not return 42: ${JSON.stringify(out.body).slice(0, 800)}`);
    }
    return;
  }
}

main().then(
  () => console.log("ok   snippet ran end to end"),
  (err) => {
    console.log(`FAIL snippet: ${err.message}`);
    process.exit(1);
  },
);
