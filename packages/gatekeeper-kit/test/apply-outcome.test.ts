/**
 * The apply outcome taxonomy (apply-outcome.ts) against REAL sockets: `classifyTransportError` of
 * the errors fetch (undici) raises for a closed port, a server that cuts the connection after
 * reading the request, a server that never answers, a host name that does not resolve and a TLS
 * server with a self-signed certificate; `endpointOrigin` and `faultMessage`; and the apply
 * handlers turning `NotSent` into an ok=false outcome and `AnswerLost` into UNAVAILABLE, over
 * real grpc-js on loopback.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { readApplyOutcome } from "@gatehouse/apply-protocol";
import type { ApplyActionRequest, ApplyActionsProgress } from "@gatehouse/proto";
import { freePort } from "@gatehouse/service-kit";
import { type ServiceError, status } from "@grpc/grpc-js";
import { applyRunHandler, applyStreamHandler } from "../src/apply.ts";
import {
  AnswerLost,
  applyFault,
  classifyTransportError,
  endpointOrigin,
  faultMessage,
  NotSent,
} from "../src/apply-outcome.ts";
import { selfSignedCertificate } from "../src/testing.ts";
import { startGatekeeper } from "./helpers.ts";

const cleanups: (() => void)[] = [];
after(() => {
  for (const c of cleanups.reverse()) c();
});

/** The error `fetch(url, init)` rejects with (fails the test when it resolves). */
async function fetchError(url: string, init?: RequestInit): Promise<unknown> {
  try {
    const res = await fetch(url, init);
    await res.body?.cancel();
  } catch (err) {
    return err;
  }
  assert.fail(`fetch ${url} answered`);
}

/** A TCP server on loopback calling `onSocket` for each connection; closed after the tests. */
async function tcpServer(onSocket: (s: Socket) => void): Promise<number> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return (server.address() as { port: number }).port;
}

test("a closed port: not sent, refused", async () => {
  const port = await freePort();
  const fault = classifyTransportError(await fetchError(`http://127.0.0.1:${port}/`));
  assert.deepEqual(fault, { sent: false, cause: "refused", detail: "ECONNREFUSED" });
});

test("a server that cuts the connection after reading the request: sent, closed", async () => {
  let requests = 0;
  const port = await tcpServer((s) =>
    s.on("data", () => {
      requests++;
      s.destroy();
    }),
  );
  const fault = classifyTransportError(
    await fetchError(`http://127.0.0.1:${port}/`, { method: "POST", body: "x" }),
  );
  assert.equal(requests, 1, "the request reached the server");
  assert.deepEqual(fault, { sent: true, cause: "closed", detail: "UND_ERR_SOCKET" });
});

test("a server that never answers, given up by an AbortSignal timeout: sent, timeout", async () => {
  let requests = 0;
  const port = await tcpServer((s) => s.on("data", () => requests++));
  const fault = classifyTransportError(
    await fetchError(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(300) }),
  );
  assert.equal(requests, 1, "the request reached the server");
  assert.deepEqual(fault, { sent: true, cause: "timeout", detail: "TimeoutError" });
});

test("a host name that does not resolve: not sent, dns", async () => {
  const fault = classifyTransportError(await fetchError("http://gatehouse-apply-outcome-test.invalid/"));
  assert.equal(fault.sent, false);
  assert.equal(fault.cause, "dns");
  assert.match(fault.detail, /^(ENOTFOUND|EAI_AGAIN)$/);
});

test("a TLS server with a self-signed certificate: not sent, tls, and no request reached it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gk-kit-tls-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const tls = selfSignedCertificate(dir);
  let requests = 0;
  const server = createHttpsServer(tls, (_req, res) => {
    requests++;
    res.end("ok");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => server.close());
  const { port } = server.address() as { port: number };
  const fault = classifyTransportError(
    await fetchError(`https://127.0.0.1:${port}/`, { method: "POST", body: "x" }),
  );
  assert.equal(requests, 0);
  assert.equal(fault.sent, false);
  assert.equal(fault.cause, "tls");
  assert.match(fault.detail, /SELF_SIGNED|CERT|TLS/);
});

test("endpointOrigin keeps scheme, host and port; never user, password, path or query", () => {
  assert.equal(
    endpointOrigin("https://alice:s3cret@mcp.example.com:8443/private/path?token=t0k#frag"),
    "https://mcp.example.com:8443",
  );
  assert.equal(endpointOrigin("postgres://app:pw@db.internal:5432/shop"), "postgres://db.internal:5432");
  assert.equal(endpointOrigin('stdio server "memory"'), 'stdio server "memory"');
  assert.equal(endpointOrigin("x".repeat(200)).length, 120);
});

test("faultMessage and applyFault: not sent is NotSent naming the cause; sent is AnswerLost saying the outcome is unknown", () => {
  const endpoint = "https://bob:pw@mcp.example.com/mcp";
  const notSent = applyFault("calling create_file", endpoint, {
    sent: false,
    cause: "refused",
    detail: "ECONNREFUSED",
  });
  assert.ok(notSent instanceof NotSent);
  assert.equal(
    notSent.message,
    "calling create_file at https://mcp.example.com was not sent: connection refused (nothing is listening there) [ECONNREFUSED]; check that the server is running and that the host and port are right",
  );
  const lost = applyFault("calling create_file", endpoint, { sent: true, cause: "closed", detail: "" });
  assert.ok(lost instanceof AnswerLost);
  assert.match(
    lost.message,
    /^calling create_file at https:\/\/mcp\.example\.com: the connection closed before the answer came; .*outcome is unknown/,
  );
  assert.doesNotMatch(
    faultMessage("x", endpoint, { sent: true, cause: "other", detail: "" }),
    /bob|pw|\.com\/mcp/,
  );
});

const deps = {
  metrics: { rpcs: { inc: () => undefined }, rpcSeconds: { startTimer: () => () => undefined } },
  logger: { error: () => undefined, warn: () => undefined },
};
const failures = new Map<number, Error>([
  [1, new NotSent("calling x at http://127.0.0.1:1 was not sent: connection refused")],
  [2, new AnswerLost("calling x at http://127.0.0.1:1: the connection closed; the outcome is unknown")],
]);
const fn = async (req: ApplyActionRequest) => {
  const err = failures.get(req.actionId);
  if (err) throw err;
  return { ok: true, resultJson: "{}", error: "" };
};
const gk = await startGatekeeper({
  applyAction: applyStreamHandler(deps, fn),
  applyActions: applyRunHandler(deps, fn),
});
cleanups.push(() => gk.close());

const req = (actionId: number): ApplyActionRequest => ({
  workspaceId: "ws-1",
  binding: "X",
  url: "test://x",
  trust: "byo",
  actionId,
  localId: `~${actionId}`,
  payloadJson: "{}",
  dependencyResults: {},
});

test("applyStreamHandler: NotSent is the outcome ok=false with its message (recorded failed)", async () => {
  const outcome = await readApplyOutcome(gk.client.applyAction(req(1)));
  assert.deepEqual(outcome, {
    ok: false,
    resultJson: "",
    error: "calling x at http://127.0.0.1:1 was not sent: connection refused",
  });
});

test("applyStreamHandler: AnswerLost ends the stream with UNAVAILABLE (recorded outcome unknown)", async () => {
  await assert.rejects(readApplyOutcome(gk.client.applyAction(req(2))), (err: ServiceError) => {
    assert.equal(err.code, status.UNAVAILABLE);
    assert.match(err.details, /outcome is unknown/);
    return true;
  });
});

test("applyRunHandler: NotSent is that action's ok=false outcome and the run ends there", async () => {
  failures.set(11, new NotSent("calling x at http://127.0.0.1:1 was not sent: connection refused"));
  const outcomes: [number, boolean, string][] = [];
  const run = gk.client.applyActions({
    workspaceId: "ws-1",
    binding: "X",
    url: "test://x",
    trust: "byo",
    actions: [10, 11, 12].map((id) => ({
      actionId: id,
      localId: `~${id}`,
      payloadJson: "{}",
      dependencyResults: {},
    })),
  });
  await new Promise<void>((ok, ko) => {
    run.on("data", (m: ApplyActionsProgress) => {
      if (m.event?.$case === "outcome")
        outcomes.push([m.actionId, m.event.outcome.ok, m.event.outcome.error]);
    });
    run.on("error", ko);
    run.on("end", ok);
  });
  assert.deepEqual(outcomes, [
    [10, true, ""],
    [11, false, "calling x at http://127.0.0.1:1 was not sent: connection refused"],
  ]);
});
