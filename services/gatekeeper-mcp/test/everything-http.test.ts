/**
 * Against the REAL everything MCP server over Streamable HTTP, behind a counting HTTP proxy that
 * counts the tools/call requests reaching the server. FakeApprovalQueue stands in for
 * services/approval (the real approval service is tested with this gatekeeper in the
 * cross-service suite).
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { createServer, request, type Server } from "node:http";
import { after, before, test } from "node:test";
import type { ResolveResourceResponse } from "@gatehouse/proto";
import { freePort } from "@gatehouse/service-kit";
import {
  EVERYTHING_SERVER,
  type Harness,
  openBinding,
  rejects,
  startHarness,
  startHttpMcpServer,
  unary,
} from "./helpers.ts";

let h: Harness;
let child: ChildProcess;
let proxy: Server;
let proxyPort = 0;
const toolCalls: string[] = [];

before(async () => {
  const port = await freePort();
  child = await startHttpMcpServer("everything server", [EVERYTHING_SERVER, "streamableHttp"], {
    PORT: String(port),
  });
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      try {
        const msg = JSON.parse(body.toString("utf8"));
        for (const m of Array.isArray(msg) ? msg : [msg])
          if (m.method === "tools/call") toolCalls.push(m.params?.name);
      } catch {
        // GET/DELETE or non-JSON: forwarded as is
      }
      const up = request(
        {
          host: "127.0.0.1",
          port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: `127.0.0.1:${port}` },
        },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        },
      );
      up.on("error", () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  proxyPort = (proxy.address() as { port: number }).port;
  h = await startHarness({
    endpoints: { everything: { url: `http://127.0.0.1:${proxyPort}/mcp`, vetted: true } },
  });
});

after(async () => {
  await h.close();
  proxy.closeAllConnections();
  await new Promise<void>((r) => proxy.close(() => r()));
  child.kill("SIGTERM");
});

test("a registered vetted HTTP endpoint resolves as vetted with its hyphenated tools as methods", async () => {
  const res = await unary<{ url: string; name: string }, ResolveResourceResponse>(
    h.client.resolveResource.bind(h.client),
    { url: `http://127.0.0.1:${proxyPort}/mcp#tool=echo&tool=get-sum`, name: "" },
  );
  assert.equal(res.binding, "EVERYTHING");
  assert.equal(res.trust, "vetted");
  assert.deepEqual(res.methods, ["echo", "get-sum", "getActionResult"]);
  assert.match(res.dts, /"get-sum"\(args: EVERYTHING_Args\.get_sum\.Args\): Promise<McpCallToolResult>;/);
});

test("a read over Streamable HTTP is recorded and returned", async () => {
  const b = openBinding(h.client, "EVERYTHING", "mcp://everything");
  try {
    const res = await b.stub["get-sum"]({ a: 2, b: 3 });
    assert.match(res.content[0].text, /5/);
    assert.equal(h.approval.observationCalls.at(-1)!.description.kind, "mcp.tool.get-sum");
  } finally {
    b.close();
  }
});

test("vetted endpoint + favourable hints is auto-approvable; the same server pasted as byo is not", async () => {
  const args = { name: "x.gz", data: "data:text/plain;base64,aGVsbG8=", outputType: "resource" };
  const vetted = openBinding(h.client, "EVERYTHING", "mcp://everything");
  const byo = openBinding(h.client, "LOCAL", `http://localhost:${proxyPort}/mcp`);
  try {
    const calls = toolCalls.length;
    const p1 = await vetted.stub["gzip-file-as-resource"](args);
    const p2 = await byo.stub["gzip-file-as-resource"](args);
    assert.equal(toolCalls.length, calls, "writes never reach the server before approval");
    const s1 = h.approval.submissions.find((s) => s.actionId === p1.actionId)!;
    const s2 = h.approval.submissions.find((s) => s.actionId === p2.actionId)!;
    assert.equal(s1.description.autoApprovable, true);
    assert.equal(s2.description.autoApprovable, false);
    assert.match(s2.description.classifiedBy, /endpoint byo/);
  } finally {
    vetted.close();
    byo.close();
  }
});

test("a tool outside the scope makes zero HTTP requests to the server", async () => {
  const b = openBinding(h.client, "EVERYTHING", `http://127.0.0.1:${proxyPort}/mcp#tool=echo`);
  try {
    assert.equal((await b.stub.echo({ message: "hi" })).content[0].text, "Echo: hi");
    const calls = toolCalls.length;
    await rejects(b.stub["get-sum"]({ a: 1, b: 2 }), /not a method of this binding/);
    await rejects(b.stub["get-env"]({}), /not a method of this binding/);
    assert.equal(toolCalls.length, calls);
  } finally {
    b.close();
  }
});

test("claiming vetted trust for a byo URL is refused at open", async () => {
  const b = openBinding(h.client, "LOCAL", `http://localhost:${proxyPort}/mcp`, "vetted");
  try {
    await rejects(b.stub.echo({ message: "x" }), /not a vetted registry entry/);
  } finally {
    b.close();
  }
});
