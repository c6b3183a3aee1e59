import assert from "node:assert/strict";
import { test } from "node:test";
import { FrameTransport } from "../src/frame-transport.ts";

test("frames pushed before and after receive() arrive in order", async () => {
  const t = new FrameTransport({ onSend: () => {} });
  t.push("a");
  const pending = t.receive();
  assert.equal(await pending, "a");
  const next = t.receive();
  t.push("b");
  assert.equal(await next, "b");
});

test("close() rejects receive() only after queued frames are drained, and later pushes are ignored", async () => {
  const t = new FrameTransport({ onSend: () => {} });
  t.push("last");
  t.close(new Error("peer went away"));
  t.push("ignored");
  assert.equal(await t.receive(), "last");
  await assert.rejects(t.receive(), /peer went away/);
  assert.ok(t.closed);
});

test("abort() calls onAbort once and stops sending", () => {
  const sent: string[] = [];
  let aborts = 0;
  const t = new FrameTransport({ onSend: (f) => sent.push(f), onAbort: () => aborts++ });
  t.send("one");
  t.abort(new Error("x"));
  t.abort(new Error("y"));
  t.send("two");
  assert.deepEqual(sent, ["one"]);
  assert.equal(aborts, 1);
});
