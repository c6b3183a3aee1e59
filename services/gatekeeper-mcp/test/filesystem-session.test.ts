/**
 * Against the REAL filesystem MCP server (stdio, allowed dir as argument, behind a counting tee),
 * with a FakeApprovalQueue standing in for services/approval (the real approval service is tested
 * with this gatekeeper in the cross-service suite).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { readApplyOutcome } from "@gatehouse/gatekeeper-kit";
import type { ApplyActionResponse } from "@gatehouse/proto";
import {
  callsReachingServer,
  countedStdio,
  FS_SERVER,
  type Harness,
  openBinding,
  rejects,
  startHarness,
  tempDir,
} from "./helpers.ts";

let h: Harness;
let tmp: ReturnType<typeof tempDir>;
let root: string;
let countFile: string;

before(async () => {
  tmp = tempDir();
  root = join(tmp.dir, "allowed");
  countFile = join(tmp.dir, "calls.txt");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(root);
  writeFileSync(join(root, "hello.txt"), "hello world");
  h = await startHarness({ servers: { fs: countedStdio(countFile, FS_SERVER, [root]) } });
});
after(async () => {
  await h.close();
  tmp.remove();
});

function apply(actionId: number): Promise<ApplyActionResponse> {
  const sub = h.approval.submissions.find((s) => s.actionId === actionId)!;
  return readApplyOutcome(
    h.client.applyAction({
      workspaceId: "ws-1",
      binding: "FS",
      url: "mcp://fs",
      trust: "vetted",
      actionId,
      localId: sub.localId,
      payloadJson: sub.payloadJson,
      dependencyResults: {},
    }),
  );
}

test("a file read is recorded before its content is returned", async () => {
  const b = openBinding(h.client, "FS", "mcp://fs");
  try {
    const n = h.approval.observationCalls.length;
    const res = await b.stub.read_text_file({ path: join(root, "hello.txt") });
    assert.equal(res.content[0].text, "hello world");
    assert.equal(h.approval.observationCalls.length, n + 1);
    assert.equal(h.approval.observationCalls.at(-1)!.description.kind, "mcp.tool.read_text_file");
  } finally {
    b.close();
  }
});

test("a failing read returns the error and records nothing", async () => {
  const b = openBinding(h.client, "FS", "mcp://fs");
  try {
    const n = h.approval.observationCalls.length;
    await rejects(b.stub.read_text_file({ path: join(root, "missing.txt") }), /read read_text_file failed/);
    assert.equal(h.approval.observationCalls.length, n, "no observation for a failed read");
  } finally {
    b.close();
  }
});

test("create_directory is pending with the dir unchanged, auto-approvable (vetted, additive, idempotent), then applied once", async () => {
  const b = openBinding(h.client, "FS", "mcp://fs");
  try {
    const target = join(root, "newdir");
    const p = await b.stub.create_directory({ path: target });
    assert.equal(p.status, "pending");
    assert.ok(!existsSync(target), "nothing created before approval");
    assert.equal(callsReachingServer(countFile).filter((c) => c === "create_directory").length, 0);
    const sub = h.approval.submissions.find((s) => s.actionId === p.actionId)!;
    assert.equal(sub.description.autoApprovable, true);
    const res = await apply(p.actionId);
    assert.equal(res.ok, true, res.error);
    assert.ok(existsSync(target));
    assert.equal(callsReachingServer(countFile).filter((c) => c === "create_directory").length, 1);
  } finally {
    b.close();
  }
});

test("an apply whose tool returns isError fails with the tool's text, called exactly once", async () => {
  const b = openBinding(h.client, "FS", "mcp://fs");
  try {
    const before = readdirSync(root).sort();
    const p = await b.stub.write_file({ path: join(tmp.dir, "outside.txt"), content: "x" });
    const sub = h.approval.submissions.find((s) => s.actionId === p.actionId)!;
    assert.equal(sub.description.autoApprovable, false, "write_file is destructive");
    const res = await apply(p.actionId);
    assert.equal(res.ok, false);
    assert.match(res.error, /outside allowed directories|Access denied/i);
    assert.equal(callsReachingServer(countFile).filter((c) => c === "write_file").length, 1, "no retry");
    assert.ok(!existsSync(join(tmp.dir, "outside.txt")));
    assert.deepEqual(readdirSync(root).sort(), before);
  } finally {
    b.close();
  }
});

test("a scoped binding makes zero requests for a tool outside its scope", async () => {
  const b = openBinding(h.client, "FS", "mcp://fs#tool=read_text_file");
  try {
    const calls = callsReachingServer(countFile).length;
    await rejects(
      b.stub.write_file({ path: join(root, "x.txt"), content: "x" }),
      /not a method of this binding/,
    );
    await rejects(b.stub.list_directory({ path: root }), /not a method of this binding/);
    assert.equal(callsReachingServer(countFile).length, calls);
    assert.ok(!existsSync(join(root, "x.txt")));
  } finally {
    b.close();
  }
});

test("ApplyAction refuses a payload outside the resource scope without calling the server", async () => {
  const calls = callsReachingServer(countFile).length;
  await assert.rejects(
    readApplyOutcome(
      h.client.applyAction({
        workspaceId: "ws-1",
        binding: "FS",
        url: "mcp://fs#tool=read_text_file",
        trust: "vetted",
        actionId: 1,
        localId: "x",
        payloadJson: JSON.stringify({
          tool: "write_file",
          arguments: { path: join(root, "y"), content: "y" },
        }),
        dependencyResults: {},
      }),
    ),
    /outside the scope/,
  );
  assert.equal(callsReachingServer(countFile).length, calls);
});
