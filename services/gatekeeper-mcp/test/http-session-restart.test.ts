/**
 * A REAL Streamable HTTP MCP server (fixtures/session-http-server.ts, built with the SDK) that is
 * restarted on the same port between a write's submission and its apply: it forgets the session
 * and answers the old session id with 404, as the MCP spec says. The gatekeeper must start a new
 * session and send the request again — for the apply (exactly one write reaches the server) and
 * for later reads. FakeApprovalQueue stands in for services/approval.
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { readApplyOutcome } from "@gatehouse/gatekeeper-kit";
import { freePort } from "@gatehouse/service-kit";
import { type Harness, openBinding, startHarness, startHttpMcpServer, tempDir } from "./helpers.ts";

const SERVER = resolve(import.meta.dirname, "fixtures/session-http-server.ts");

let h: Harness;
let tmp: ReturnType<typeof tempDir>;
let port = 0;
let writesFile: string;
let server: ChildProcess | undefined;

/** Starts the fixture on `port`; resolves once it listens. */
function startServer(): Promise<ChildProcess> {
  return startHttpMcpServer("MCP fixture", ["--import", "tsx", SERVER], {
    PORT: String(port),
    WRITES_FILE: writesFile,
  });
}

async function stopServer(): Promise<void> {
  const child = server;
  server = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
}

function writesReachingServer(): string[] {
  try {
    return readFileSync(writesFile, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

before(async () => {
  tmp = tempDir();
  writesFile = join(tmp.dir, "writes.txt");
  port = await freePort();
  server = await startServer();
  h = await startHarness({
    endpoints: { sessions: { url: `http://127.0.0.1:${port}/mcp`, vetted: true } },
  });
});

after(async () => {
  await h?.close();
  await stopServer();
  tmp?.remove();
});

test("after the HTTP server restarted, the apply starts a new session and writes exactly once; later reads work", async () => {
  const b = openBinding(h.client, "SESSIONS", "mcp://sessions");
  try {
    assert.equal((await b.stub.echo({ message: "before" })).content[0].text, "echo: before");
    const pending = (await b.stub.append_line({ line: "approved write" })) as { actionId: number };
    const sub = h.approval.submissions.find((s) => s.actionId === pending.actionId)!;
    assert.deepEqual(writesReachingServer(), [], "nothing written before approval");

    await stopServer();
    server = await startServer(); // same port, no memory of the session the gatekeeper holds

    const applied = await readApplyOutcome(
      h.client.applyAction({
        workspaceId: "ws-1",
        binding: "SESSIONS",
        url: "mcp://sessions",
        trust: "vetted",
        actionId: pending.actionId,
        localId: sub.localId,
        payloadJson: sub.payloadJson,
        dependencyResults: {},
      }),
    );
    assert.equal(applied.ok, true, applied.error);
    assert.match(applied.resultJson, /appended: approved write/);
    assert.deepEqual(writesReachingServer(), ["approved write"], "the write reached the server once");

    await stopServer();
    server = await startServer();
    assert.equal((await b.stub.echo({ message: "after" })).content[0].text, "echo: after");
    assert.deepEqual(writesReachingServer(), ["approved write"], "a read never repeats the write");
  } finally {
    b.close();
  }
});
