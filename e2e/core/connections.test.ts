/**
 * Connection requests end to end on the dev stack (real MCP gatekeeper with the real filesystem
 * server, real event store and approval service): the kernel's Connections RPCs, the gateway routes
 * and the CLI. A request is checked without connecting; accepting it introduces the resource (with
 * the fragment the person chose); it is decided once; the log, replay and verify take the events.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import type { ApiError, ConnectionDecisionResult, InboxResponse } from "@gatehouse/gateway-contract";
import { type ConnectionRequest, ConnectionsClient } from "@gatehouse/proto";
import { callUnary } from "@gatehouse/service-kit";
import { credentials, type ServiceError, status } from "@grpc/grpc-js";
import { api } from "../support/gateway-client.ts";
import { type Harness, startHarness, unary } from "../support/harness.ts";

let h: Harness;
let connections: ConnectionsClient;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";
const agent = { kind: "agent", id: "chat-7" };

before(async () => {
  h = await startHarness();
  connections = new ConnectionsClient(h.stack.addresses.kernel, credentials.createInsecure());
});
after(async () => {
  connections?.close();
  await h?.close();
});

function request(workspaceId: string, url: string, reason = "to read the docs"): Promise<ConnectionRequest> {
  return unary(connections, connections.requestConnection, { workspaceId, url, reason, caller: agent });
}

async function refused(work: Promise<unknown>): Promise<ServiceError> {
  try {
    await work;
  } catch (err) {
    return err as ServiceError;
  }
  assert.fail("the call was expected to be refused");
}

test("a connection request is checked by its gatekeeper without connecting to the resource; bad input is refused naming the field", async () => {
  let hits = 0;
  const endpoint = createServer((_req, res) => {
    hits++;
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
  try {
    const ws = await h.workspace();
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/mcp`;
    const r = await request(ws, url, "  the agent wants its tools  ");
    assert.deepEqual(
      [r.state, r.url, r.reason, r.caller, r.gatekeeper],
      ["pending", url, "the agent wants its tools", agent, "mcp"],
    );
    assert.equal(hits, 0, "nothing reached the requested endpoint before a person accepted");
    // Asking again while it is pending gives the same request.
    assert.equal((await request(ws, url)).requestId, r.requestId);

    const noReason = await refused(request(ws, "mcp://files", " "));
    assert.equal(noReason.code, status.INVALID_ARGUMENT);
    assert.match(noReason.details, /reason is required/);
    const badFragment = await refused(request(ws, "mcp://files#colour=red"));
    assert.equal(badFragment.code, status.INVALID_ARGUMENT);
    assert.match(badFragment.details, /colour/);
    const noGatekeeper = await refused(request(ws, "ftp://example.com/x"));
    assert.equal(noGatekeeper.code, status.FAILED_PRECONDITION);
    assert.match(noGatekeeper.details, /no gatekeeper serves "ftp:" URLs/);
    // The dev stack runs the PostgreSQL gatekeeper only with --postgres-registry: the refusal says so.
    const noPostgres = await refused(request(ws, "postgres://crm/crm#schema=public"));
    assert.equal(noPostgres.code, status.FAILED_PRECONDITION);
    assert.match(
      noPostgres.details,
      /^the postgres gatekeeper is not configured; pass --postgres-registry <file> to gatehouse dev/,
    );
    const unknown = await refused(request(ws, "mcp://not-registered"));
    assert.equal(unknown.code, status.NOT_FOUND);
    const list = await unary(connections, connections.listConnectionRequests, { workspaceId: ws, state: "" });
    assert.deepEqual(
      list.requests.map((x) => x.requestId),
      [r.requestId],
      "refused requests record nothing",
    );
  } finally {
    endpoint.close();
  }
});

test("a request whose scope could never be granted as asked is refused: an empty #tool= for any server, a tool the registered server does not list; an endpoint URL's tools are not listed", async () => {
  let hits = 0;
  const endpoint = createServer((_req, res) => {
    hits++;
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
  try {
    const ws = await h.workspace();
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/mcp`;
    for (const empty of ["mcp://files#tool=", `${url}#tool=`]) {
      const refusal = await refused(request(ws, empty));
      assert.equal(refusal.code, status.INVALID_ARGUMENT, empty);
      assert.match(
        refusal.details,
        /"#tool=" permits no tool, so the connection could never be used; name the tools/,
      );
    }
    const unknown = await refused(request(ws, "mcp://files#tool=read_text_file&tool=nonexistent_tool"));
    assert.equal(unknown.code, status.PERMISSION_DENIED);
    assert.match(
      unknown.details,
      /tool\(s\) "nonexistent_tool" that server "files" does not offer \(it offers .*read_text_file.*\); fix the #tool= list/,
    );
    const known = await request(ws, "mcp://files#tool=read_text_file&tool=write_file");
    const remote = await request(ws, `${url}#tool=whatever_it_has`);
    assert.equal(hits, 0, "the endpoint was not contacted to check its tools");
    const list = await unary(connections, connections.listConnectionRequests, { workspaceId: ws, state: "" });
    assert.deepEqual(
      list.requests.map((x) => x.requestId),
      [known.requestId, remote.requestId],
      "refused requests record nothing",
    );
  } finally {
    endpoint.close();
  }
});

test("accepting through the gateway with a narrowed fragment introduces that binding, wakes a waiting GetConnectionRequest, and a second decision is refused naming the first", async () => {
  const ws = await h.workspace();
  const r = await request(ws, "mcp://files");
  const base = h.stack.addresses.gateway;
  const path = `/api/workspaces/${ws}/connection-requests/${r.requestId}`;

  const inbox = await api<InboxResponse>(base, tokenOf("dev-auditor"), "GET", `/api/inbox?workspace=${ws}`);
  assert.deepEqual(
    inbox.body.workspaces[0]?.connectionRequests.map((c) => [c.id, c.url, c.reason, c.caller.id]),
    [[r.requestId, "mcp://files", "to read the docs", "chat-7"]],
  );
  const auditor = await api<ApiError>(base, tokenOf("dev-auditor"), "POST", `${path}/accept`, {});
  assert.equal(auditor.status, 403);
  assert.match(auditor.body.error.message, /needs the approver or admin role/);
  const other = await api<ApiError>(base, tokenOf("dev-approver"), "POST", `${path}/accept`, {
    url: "mcp://memory#tool=read_graph",
  });
  assert.equal(other.status, 400);
  assert.match(other.body.error.message, /url must be the requested resource mcp:\/\/files/);

  const waiting = callUnary(
    connections,
    connections.getConnectionRequest,
    { workspaceId: ws, requestId: r.requestId, wait: true },
    120_000,
  );
  const ok = await api<ConnectionDecisionResult>(base, tokenOf("dev-approver"), "POST", `${path}/accept`, {
    url: "mcp://files#tool=read_text_file",
    name: "docs",
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.deepEqual(
    [ok.body.request.state, ok.body.request.binding, ok.body.request.acceptedUrl, ok.body.request.decidedBy],
    ["accepted", "DOCS", "mcp://files#tool=read_text_file", "dev-approver"],
  );
  const woken = await waiting;
  assert.deepEqual([woken.state, woken.binding], ["accepted", "DOCS"]);
  const bindings = await unary(h.kernel, h.kernel.describeBindings, { workspaceId: ws });
  assert.deepEqual(
    bindings.bindings.map((b) => [b.name, b.url, b.methods]),
    [["DOCS", "mcp://files#tool=read_text_file", ["read_text_file", "getActionResult"]]],
  );

  const again = await api<ApiError>(base, tokenOf("dev-admin"), "POST", `${path}/decline`, { reason: "no" });
  assert.equal(again.status, 409);
  assert.match(again.body.error.message, /was accepted as DOCS by dev-approver at .* already/);
  const after = await api<InboxResponse>(base, tokenOf("dev-approver"), "GET", `/api/inbox?workspace=${ws}`);
  assert.deepEqual(after.body.workspaces[0]?.connectionRequests, []);
});

test("accepting through the gateway only narrows the request: dropping or widening its #tool= is 400 naming the parameter and gatehouse connect, nothing appended; the requested scope is accepted", async () => {
  const ws = await h.workspace();
  const r = await request(ws, "mcp://files#tool=write_file", "to write the notes");
  const base = h.stack.addresses.gateway;
  const path = `/api/workspaces/${ws}/connection-requests/${r.requestId}/accept`;
  const before = await h.stack.store.streamRevision(`workspace-${ws}`);
  for (const [url, refusal] of [
    ["mcp://files", /drops the request's scope parameter "tool" \(requested tool="write_file"\)/],
    [
      "mcp://files#tool=write_file&tool=read_text_file",
      /"tool" has "read_text_file", not among the requested "write_file"/,
    ],
  ] as const) {
    const wider = await api<ApiError>(base, tokenOf("dev-approver"), "POST", path, { url });
    assert.equal(wider.status, 400, `${url}: ${JSON.stringify(wider.body)}`);
    assert.match(wider.body.error.message, refusal);
    assert.match(wider.body.error.message, /to grant more, connect the resource with `gatehouse connect`/);
  }
  assert.equal(await h.stack.store.streamRevision(`workspace-${ws}`), before, "nothing was appended");
  const ok = await api<ConnectionDecisionResult>(base, tokenOf("dev-approver"), "POST", path, {});
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.request.acceptedUrl, "mcp://files#tool=write_file");
});

test("the CLI lists and declines requests; the log, replay and verify take the connection events", async () => {
  const ws = await h.workspace();
  const r = await request(ws, "mcp://files#tool=read_text_file&tool=write_file", "to edit the notes");
  const cli = (...args: string[]) =>
    promisify(execFile)(
      process.execPath,
      [
        "--no-node-snapshot",
        "--import",
        "tsx",
        join(import.meta.dirname, "../../apps/cli/src/main.ts"),
        ...args,
      ],
      { env: { ...process.env, GATEHOUSE_KERNEL_ADDRESS: h.stack.addresses.kernel, GATEHOUSE_USER: "ann" } },
    );
  const noReason = await cli("connections", "decline", ws, String(r.requestId), "--reason", " ").catch(
    (e: { stderr: string; code: number }) => e,
  );
  assert.equal((noReason as { code: number }).code, 1);
  assert.match((noReason as { stderr: string }).stderr, /--reason is required/);
  await cli("connections", "decline", ws, String(r.requestId), "--reason", "use the read-only copy");
  const listed = JSON.parse((await cli("connections", ws, "--json")).stdout) as ConnectionRequest[];
  assert.deepEqual(
    listed.map((x) => [x.requestId, x.state, x.decidedBy, x.declineReason]),
    [[r.requestId, "declined", "user:ann", "use the read-only copy"]],
  );
  const table = (await cli("connections", ws, "--state", "declined")).stdout;
  assert.match(table, /declined/);
  assert.match(table, /use the read-only copy/);

  const accepted = await request(ws, "mcp://files#tool=read_text_file", "just reading then");
  await unary(connections, connections.decideConnectionRequest, {
    workspaceId: ws,
    requestId: accepted.requestId,
    accept: true,
    url: "",
    name: "",
    decidedBy: "user:ann",
    reason: "",
  });
  const verified = await unary(h.decisions, h.decisions.verify, { workspaceId: ws });
  assert.equal(verified.ok, true, verified.problem);
  const log = await unary(h.decisions, h.decisions.getLog, { workspaceId: ws });
  const replayed = await unary(h.decisions, h.decisions.replay, {
    workspaceId: ws,
    untilRevision: log.revision,
  });
  assert.equal(log.revision, verified.eventsChecked - 1);
  assert.deepEqual(replayed, log);
});

test("connection requests follow workspace membership: a person who is not a member cannot list, accept or decline them (403, nothing appended) and their inbox lacks them", async () => {
  const ws = await h.workspaceOf("user:dev-admin");
  const r = await request(ws, "mcp://files");
  const base = h.stack.addresses.gateway;
  const before = await h.stack.store.streamRevision(`workspace-${ws}`);
  const routes: Array<[string, string, unknown]> = [
    ["GET", `/api/workspaces/${ws}/connection-requests`, undefined],
    ["POST", `/api/workspaces/${ws}/connection-requests/${r.requestId}/accept`, {}],
    ["POST", `/api/workspaces/${ws}/connection-requests/${r.requestId}/decline`, { reason: "not mine" }],
  ];
  for (const [method, path, body] of routes) {
    const res = await api<ApiError>(base, tokenOf("dev-approver"), method, path, body);
    assert.equal(res.status, 403, `${method} ${path}: ${JSON.stringify(res.body)}`);
    assert.match(res.body.error.message, new RegExp(`dev-approver is not a member of workspace ${ws}`));
  }
  assert.equal(await h.stack.store.streamRevision(`workspace-${ws}`), before, "nothing was appended");
  const inbox = await api<InboxResponse>(base, tokenOf("dev-approver"), "GET", "/api/inbox");
  assert.equal(
    inbox.body.workspaces.find((w) => w.id === ws),
    undefined,
    "the inbox lacks the workspace and its requests",
  );
  const owner = await api<{ requests: unknown[] }>(
    base,
    tokenOf("dev-admin"),
    "GET",
    `/api/workspaces/${ws}/connection-requests?state=pending`,
  );
  assert.equal(owner.body.requests.length, 1, "the owner sees it");
});
