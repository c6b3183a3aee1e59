/**
 * The model-text deltas of one step: coalesced and sent at most once per interval, numbered from 0,
 * everything pushed is sent once (in order) by the flush at the step's end, and no sink means none.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatDelta } from "@gatehouse/gateway-contract";
import { stepDeltas } from "../src/agent/deltas.ts";

const where = { workspaceId: "w1", chatId: "c1", turnId: "t1", step: 2 };

test("text pushed faster than the interval is coalesced; seq counts from 0; the flush sends the rest", async () => {
  const sent: Array<ChatDelta & { at: number }> = [];
  const d = stepDeltas((x) => sent.push({ ...x, at: Date.now() }), where, 50);
  const pieces = Array.from({ length: 40 }, (_, i) => `w${i} `);
  for (const p of pieces) {
    d.push(p);
    await new Promise((r) => setTimeout(r, 5));
  }
  d.flush();
  assert.equal(sent.map((s) => s.text).join(""), pieces.join(""));
  assert.deepEqual(
    sent.map((s) => s.seq),
    sent.map((_, i) => i),
  );
  assert.ok(sent.length < pieces.length / 2, `coalesced: ${sent.length} deltas for ${pieces.length} pieces`);
  for (const [i, s] of sent.entries()) {
    assert.deepEqual({ ...s, seq: 0, text: "", at: 0 }, { ...where, seq: 0, text: "", at: 0 });
    // Every delta but the flushed last one waited its interval after the one before.
    const prev = sent[i - 1];
    if (prev && i < sent.length - 1)
      assert.ok(s.at - prev.at >= 45, `delta ${i} came ${s.at - prev.at} ms after`);
  }
  // Nothing held: a second flush sends nothing, and no timer fires later.
  const count = sent.length;
  d.flush();
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(sent.length, count);
});

test("the first piece goes at once; without a sink nothing is sent; a sink that throws stops only the deltas", () => {
  const sent: ChatDelta[] = [];
  const d = stepDeltas((x) => sent.push(x), where, 50);
  d.push("Hello");
  assert.deepEqual(sent, [{ ...where, seq: 0, text: "Hello" }]);
  d.push("");
  d.flush();
  assert.equal(sent.length, 1, "empty text is not a delta");

  const none = stepDeltas(undefined, where);
  none.push("x");
  none.flush();

  let calls = 0;
  const broken = stepDeltas(
    () => {
      calls++;
      throw new Error("not a subject token");
    },
    where,
    0,
  );
  broken.push("a");
  broken.push("b");
  broken.flush();
  assert.equal(calls, 1);
});
