/**
 * Apply outcomes when the MCP server fails (issue: an outcome is "failed" only when nothing
 * happened), over Streamable HTTP and over stdio, with REAL SDK-built servers
 * (fixtures/fault-server.ts) that perform the write and then fail to answer, servers that are
 * down, and a call that times out. Applies go through the real apply path: the gatekeeper's gRPC
 * ApplyAction / ApplyActions read by approval-core's GrpcGatekeeperApplier (what the lifecycle
 * worker calls), and recorded the way the worker records them: an outcome with ok=false is
 * "failed", a thrown error that may have been sent is "outcome unknown". Each test checks the
 * server's own record, so a write that happened is never recorded "failed".
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { GatekeeperCallError, GrpcGatekeeperApplier } from "@gatehouse/approval-core";
import { APPLY_MAX_MS_METADATA } from "@gatehouse/gatekeeper-kit";
import { selfSignedCertificate } from "@gatehouse/gatekeeper-kit/testing";
import type { ApplyActionRequest, ApplyActionResponse, ApplyActionsProgress } from "@gatehouse/proto";
import { freePort, waitUntil } from "@gatehouse/service-kit";
import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { classifyCallError } from "../src/transport-faults.ts";
import { type Harness, startHarness, startHttpMcpServer, tempDir, unary } from "./helpers.ts";

const FAULT_SERVER = resolve(import.meta.dirname, "fixtures/fault-server.ts");
/** Status codes by which the worker records a thrown apply as failed (refused before acting). */
const REFUSALS = [
  status.UNIMPLEMENTED,
  status.INVALID_ARGUMENT,
  status.UNAUTHENTICATED,
  status.PERMISSION_DENIED,
  status.NOT_FOUND,
];

let h: Harness;
let applier: GrpcGatekeeperApplier;
let tmp: ReturnType<typeof tempDir>;
let httpPort = 0;
let downPort = 0;
let httpWrites: string;
let stdioWrites: string;
let httpServer: ChildProcess | undefined;
let resumablePort = 0;
let resumableWrites: string;
let resumableServer: ChildProcess | undefined;
let nextId = 1;
/** A TLS server with a self-signed certificate (made by openssl): the gatekeeper does not trust it. */
let tlsServer: HttpsServer;
let tlsPort = 0;
let tlsRequests = 0;

/** Starts the fault server over HTTP on `port`; `resumable`: with an event store. */
function startHttpServer(port: number, writes: string, resumable = false): Promise<ChildProcess> {
  return startHttpMcpServer("fault server", ["--import", "tsx", FAULT_SERVER], {
    TRANSPORT: "http",
    PORT: String(port),
    WRITES_FILE: writes,
    EVENT_STORE: resumable ? "1" : "",
  });
}

before(async () => {
  tmp = tempDir();
  httpWrites = join(tmp.dir, "http-writes.txt");
  stdioWrites = join(tmp.dir, "stdio-writes.txt");
  resumableWrites = join(tmp.dir, "resumable-writes.txt");
  httpPort = await freePort();
  downPort = await freePort(); // nothing listens there
  resumablePort = await freePort();
  const tls = selfSignedCertificate(tmp.dir);
  tlsServer = createHttpsServer(tls, (_req, res) => {
    tlsRequests++;
    res.end();
  });
  await new Promise<void>((r) => tlsServer.listen(0, "127.0.0.1", r));
  tlsPort = (tlsServer.address() as { port: number }).port;
  [httpServer, resumableServer] = await Promise.all([
    startHttpServer(httpPort, httpWrites),
    startHttpServer(resumablePort, resumableWrites, true),
  ]);
  h = await startHarness({
    servers: {
      stdiofault: {
        command: process.execPath,
        args: ["--import", "tsx", FAULT_SERVER],
        env: { TRANSPORT: "stdio", WRITES_FILE: stdioWrites },
        vetted: true,
      },
      stdiomissing: { command: "/nonexistent/private-dir/gatehouse-no-such-mcp-server", vetted: true },
      stdioquits: { command: process.execPath, args: ["-e", "process.exit(3)"], vetted: true },
    },
    endpoints: {
      httpfault: { url: `http://127.0.0.1:${httpPort}/mcp/private-path`, vetted: true },
      httpdown: { url: `http://127.0.0.1:${downPort}/mcp/private-path`, vetted: true },
      httpresumable: { url: `http://127.0.0.1:${resumablePort}/mcp`, vetted: true },
      httpnodns: { url: "https://gatehouse-apply-test.invalid/mcp/private-path", vetted: true },
      httpbadtls: { url: `https://127.0.0.1:${tlsPort}/mcp/private-path`, vetted: true },
    },
  });
  applier = new GrpcGatekeeperApplier(
    { mcp: `127.0.0.1:${h.gk.port}` },
    { applyMaxMs: { mcp: 60_000 }, applyGraceMs: 5000 },
  );
});

after(async () => {
  applier?.close();
  await h?.close();
  tlsServer?.close();
  for (const child of [httpServer, resumableServer]) {
    if (!child || child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  }
  tmp?.remove();
});

/** The lines a server's own record holds. */
function record(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

function request(server: string, tool: string, line: string): ApplyActionRequest {
  const actionId = nextId++;
  return {
    workspaceId: "ws-1",
    binding: server.toUpperCase(),
    url: `mcp://${server}`,
    trust: "vetted",
    actionId,
    localId: `l-${actionId}`,
    payloadJson: JSON.stringify({ tool, arguments: { line } }),
    dependencyResults: {},
  };
}

type Recorded = { state: "applied" | "failed" | "unknown"; message: string };

/** Applies through ApplyAction and records the result the way the lifecycle worker does. */
async function apply(req: ApplyActionRequest): Promise<Recorded> {
  try {
    const r: ApplyActionResponse = await applier.apply("mcp", req);
    return r.ok ? { state: "applied", message: r.resultJson } : { state: "failed", message: r.error };
  } catch (err) {
    assert.ok(err instanceof GatekeeperCallError, String(err));
    return { state: err.requestMaybeSent ? "unknown" : "failed", message: err.message };
  }
}

/** ApplyActions of one action with a per-action maximum of `maxMs`; resolves with the stream's error. */
function applyWithMax(req: ApplyActionRequest, maxMs: number): Promise<ServiceError> {
  const metadata = new Metadata();
  metadata.set(APPLY_MAX_MS_METADATA, String(maxMs));
  const { actionId, localId, payloadJson, dependencyResults, ...run } = req;
  const call = h.client.applyActions(
    { ...run, actions: [{ actionId, localId, payloadJson, dependencyResults }] },
    metadata,
  );
  return new Promise((ok, ko) => {
    call.on("data", (m: ApplyActionsProgress) => {
      if (m.event?.$case === "outcome") ko(new Error(`an outcome came: ${JSON.stringify(m.event.outcome)}`));
    });
    call.on("error", ok);
    call.on("end", () => ko(new Error("the run ended without an error")));
  });
}

const HTTP_ORIGIN = () => `http://127.0.0.1:${httpPort}`;

test("Streamable HTTP: the server writes and then drops the connection: outcome unknown, never failed", async () => {
  const r = await apply(request("httpfault", "write_then_drop", "http dropped"));
  assert.equal(r.state, "unknown", r.message);
  assert.deepEqual(record(httpWrites), ["http dropped"], "the write happened on the server");
  assert.match(
    r.message,
    new RegExp(
      `calling write_then_drop at ${HTTP_ORIGIN().replace(/\./g, "\\.")}: the connection closed before the answer came.*outcome is unknown`,
    ),
  );
  assert.doesNotMatch(r.message, /private-path|fetch failed$/);
});

test("Streamable HTTP, a run: the dropped write is unknown and the next action is never sent", async () => {
  const first = request("httpfault", "write_then_drop", "run first");
  const second = request("httpfault", "write_then_drop", "run second");
  const { actionId: a1, localId: l1, payloadJson: p1 } = first;
  const end = await applier.applyRun(
    "mcp",
    {
      workspaceId: first.workspaceId,
      binding: first.binding,
      url: first.url,
      trust: first.trust,
      actions: [
        { actionId: a1, localId: l1, payloadJson: p1, dependencyResults: {} },
        {
          actionId: second.actionId,
          localId: second.localId,
          payloadJson: second.payloadJson,
          dependencyResults: {},
        },
      ],
    },
    { onOutcome: (id, o) => assert.fail(`no outcome expected, got ${id}: ${JSON.stringify(o)}`) },
  );
  assert.equal(end.lost?.actionId, a1);
  assert.equal(end.lost?.error.requestMaybeSent, true, "outcome unknown");
  assert.deepEqual(end.notSent, [second.actionId]);
  assert.deepEqual(record(httpWrites).slice(-1), ["run first"], "only the first reached the server");
});

test("Streamable HTTP: nothing listening: failed, not sent, naming the endpoint's origin and the cause", async () => {
  const r = await apply(request("httpdown", "write_then_drop", "never"));
  assert.equal(r.state, "failed", r.message);
  assert.match(
    r.message,
    new RegExp(
      `^calling write_then_drop at http://127\\.0\\.0\\.1:${downPort} was not sent: connection refused \\(nothing is listening there\\) \\[ECONNREFUSED\\]; check that the server is running`,
    ),
  );
  assert.doesNotMatch(r.message, /private-path/);
});

test("Streamable HTTP: a host name that does not resolve: failed, not sent, saying so", async () => {
  const r = await apply(request("httpnodns", "write_then_drop", "never"));
  assert.equal(r.state, "failed", r.message);
  assert.match(
    r.message,
    /^calling write_then_drop at https:\/\/gatehouse-apply-test\.invalid was not sent: the host name does not resolve \[(ENOTFOUND|EAI_AGAIN)\]; check the host name/,
  );
});

test("Streamable HTTP: a server whose certificate is not trusted: failed, not sent, naming TLS; no request reached it", async () => {
  const r = await apply(request("httpbadtls", "write_then_drop", "never"));
  assert.equal(r.state, "failed", r.message);
  assert.match(
    r.message,
    new RegExp(
      `^calling write_then_drop at https://127\\.0\\.0\\.1:${tlsPort} was not sent: the TLS handshake failed \\[[A-Z_]+\\]; check the server's certificate`,
    ),
  );
  assert.doesNotMatch(r.message, /private-path/);
  assert.equal(tlsRequests, 0);
});

test("ResolveResource of an endpoint nothing listens on names its origin and the cause, not 'fetch failed'", async () => {
  await assert.rejects(
    unary(h.client.resolveResource.bind(h.client), { url: "mcp://httpdown", name: "" }),
    (err: ServiceError) => {
      assert.equal(err.code, status.UNAVAILABLE);
      assert.match(
        err.details,
        new RegExp(
          `opening a session with MCP server "httpdown" at http://127\\.0\\.0\\.1:${downPort} was not sent: connection refused`,
        ),
      );
      assert.doesNotMatch(err.details, /private-path|fetch failed/);
      return true;
    },
  );
});

for (const server of ["httpfault", "stdiofault"]) {
  test(`${server}: a JSON-RPC error answer is failed with the server's error`, async () => {
    const r = await apply(request(server, "answer_with_error", "this line"));
    assert.equal(r.state, "failed", r.message);
    assert.equal(
      r.message,
      "calling answer_with_error failed: MCP error -32602: the server refused this line",
    );
  });
}

test("stdio: the server writes and then exits before answering: outcome unknown, never failed", async () => {
  const r = await apply(request("stdiofault", "write_then_drop", "stdio exited"));
  assert.equal(r.state, "unknown", r.message);
  assert.deepEqual(record(stdioWrites), ["stdio exited"], "the write happened on the server");
  assert.match(
    r.message,
    /calling write_then_drop at stdio server "stdiofault": the connection closed before the answer came.*outcome is unknown/,
  );
});

test("stdio: a command that does not exist: failed, not sent, naming the server and the cause, not the path", async () => {
  const r = await apply(request("stdiomissing", "write_then_drop", "never"));
  assert.equal(r.state, "failed", r.message);
  assert.match(
    r.message,
    /^calling write_then_drop at stdio server "stdiomissing" was not sent: the command "gatehouse-no-such-mcp-server" could not be started \[ENOENT\]; check the registry entry's command/,
  );
  assert.doesNotMatch(r.message, /private-dir/);
});

test("stdio: a server that exits at once: failed, not sent, saying it exited before the session opened", async () => {
  const r = await apply(request("stdioquits", "write_then_drop", "never"));
  assert.equal(r.state, "failed", r.message);
  assert.match(
    r.message,
    /^calling write_then_drop at stdio server "stdioquits" was not sent: the server process exited before the MCP session opened/,
  );
});

for (const [server, file] of [
  ["httpfault", () => httpWrites],
  ["stdiofault", () => stdioWrites],
] as const) {
  test(`${server}: a call that is never answered ends at the apply's maximum as outcome unknown`, async () => {
    const line = `${server} timed out`;
    const started = Date.now();
    const err = await applyWithMax(request(server, "write_then_hang", line), 1500);
    const elapsed = Date.now() - started;
    assert.ok(!REFUSALS.includes(err.code), `recorded unknown, not failed: ${status[err.code]}`);
    assert.equal(err.code, status.UNAVAILABLE);
    assert.match(
      err.details,
      /calling write_then_hang at .*: no answer came in time \[RequestTimeout\].*outcome is unknown/,
    );
    assert.ok(record(file()).includes(line), "the write happened on the server");
    assert.ok(elapsed >= 1400 && elapsed < 10_000, `ended at the maximum (${elapsed} ms)`);
  });
}

test("Streamable HTTP: the server killed while streaming the answer: outcome unknown within seconds", async () => {
  const req = request("httpfault", "write_then_hang", "http killed");
  const applied = apply(req);
  await waitUntil("the write reached the server", () => record(httpWrites).includes("http killed"));
  const server = httpServer!;
  const exited = new Promise((r) => server.once("exit", r));
  const killedAt = Date.now();
  server.kill("SIGKILL");
  await exited;
  const r = await applied;
  const elapsed = Date.now() - killedAt;
  console.log(`http: killed mid-call, recorded ${r.state} ${elapsed} ms after the kill`);
  assert.equal(r.state, "unknown", r.message);
  assert.ok(elapsed < 10_000, `ended ${elapsed} ms after the kill, well under 30 s`);
  assert.match(r.message, /the connection closed before the answer came.*outcome is unknown/);
});

test("Streamable HTTP, a resumable answer stream: the server killed mid-call ends the apply once re-opening it failed", async () => {
  const applied = apply(request("httpresumable", "write_then_hang", "resumable killed"));
  await waitUntil("the write reached the server", () => record(resumableWrites).includes("resumable killed"));
  const server = resumableServer!;
  const exited = new Promise((r) => server.once("exit", r));
  const killedAt = Date.now();
  server.kill("SIGKILL");
  await exited;
  const r = await applied;
  const elapsed = Date.now() - killedAt;
  console.log(`http, resumable: killed mid-call, recorded ${r.state} ${elapsed} ms after the kill`);
  assert.equal(r.state, "unknown", r.message);
  // The SDK tries to re-open the stream twice (0.5 s, then 0.75 s later) before giving up.
  assert.ok(elapsed >= 1000 && elapsed < 10_000, `ended ${elapsed} ms after the kill, well under 30 s`);
  assert.match(r.message, /the connection closed before the answer came.*outcome is unknown/);
});

test("Streamable HTTP: after the server died, an apply over the pooled session is failed, not sent", async () => {
  const r = await apply(request("httpfault", "write_then_drop", "after death"));
  assert.equal(r.state, "failed", r.message);
  assert.match(
    r.message,
    /^calling write_then_drop at http:\/\/127\.0\.0\.1:\d+ was not sent: connection refused/,
  );
  assert.ok(!record(httpWrites).includes("after death"));
});

test("stdio: the server killed while the call is pending: outcome unknown within seconds", async () => {
  const req = request("stdiofault", "write_then_hang", "stdio killed");
  const applied = apply(req);
  await waitUntil("the write reached the server", () => record(stdioWrites).includes("stdio killed"));
  const pid = Number(readFileSync(`${stdioWrites}.pid`, "utf8"));
  const killedAt = Date.now();
  process.kill(pid, "SIGKILL");
  const r = await applied;
  const elapsed = Date.now() - killedAt;
  console.log(`stdio: killed mid-call, recorded ${r.state} ${elapsed} ms after the kill`);
  assert.equal(r.state, "unknown", r.message);
  assert.ok(elapsed < 10_000, `ended ${elapsed} ms after the kill, well under 30 s`);
  assert.match(r.message, /stdio server "stdiofault": the connection closed before the answer came/);
});

test("classifyCallError: an error answer of the server is answered; closed, timed out, 5xx and network errors are faults", () => {
  assert.deepEqual(classifyCallError(new McpError(ErrorCode.InvalidParams, "no such tool")), {
    answered: true,
    error: "MCP error -32602: no such tool",
  });
  assert.equal(classifyCallError(new StreamableHTTPError(400, "bad request")).answered, true);
  assert.deepEqual(classifyCallError(new StreamableHTTPError(503, "unavailable")), {
    answered: false,
    fault: { sent: true, cause: "other", detail: "HTTP 503" },
  });
  assert.deepEqual(classifyCallError(new McpError(ErrorCode.ConnectionClosed, "Connection closed")), {
    answered: false,
    fault: { sent: true, cause: "closed", detail: "ConnectionClosed" },
  });
  assert.deepEqual(classifyCallError(new McpError(ErrorCode.RequestTimeout, "Request timed out")), {
    answered: false,
    fault: { sent: true, cause: "timeout", detail: "RequestTimeout" },
  });
  const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  assert.deepEqual(classifyCallError(new TypeError("fetch failed", { cause: refused })), {
    answered: false,
    fault: { sent: false, cause: "refused", detail: "ECONNREFUSED" },
  });
  const reset = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
  assert.deepEqual(classifyCallError(new TypeError("fetch failed", { cause: reset })), {
    answered: false,
    fault: { sent: true, cause: "closed", detail: "UND_ERR_SOCKET" },
  });
});
