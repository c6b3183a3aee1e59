/**
 * The model-text deltas of one step: coalesced and sent at most once per interval, numbered from 0,
 * everything pushed is sent once (in order) by the flush at the step's end, and no sink means none.
 * The provider key is scrubbed from the step's text as a whole: split across pieces (2, 3, at the very
 * end, overlapping itself) it never reaches a delta, the deltas joined are the recorded text, and text
 * without the key goes at once, less at most a tail that could start it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { scrub } from "@gatehouse/agent-core/providers";
import type { ChatDelta } from "@gatehouse/gateway-contract";
import { stepDeltas } from "../src/agent/deltas.ts";

const where = { workspaceId: "w1", chatId: "c1", turnId: "t1", step: 2 };

test("text pushed faster than the interval is coalesced; seq counts from 0; the flush sends the rest", async () => {
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
  const timersBefore = timers();
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
  assert.equal(timers(), timersBefore, "no interval timer is left pending after the flush");
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

/** Pushes `pieces` into deltas scrubbing `key`, sent at once (no throttle); returns what each push sent and the flush sent. */
function streamed(
  key: string,
  pieces: string[],
): { perPush: string[][]; atFlush: string[]; all: ChatDelta[] } {
  const all: ChatDelta[] = [];
  const d = stepDeltas((x) => all.push(x), where, 0, key);
  const perPush = pieces.map((p) => {
    const before = all.length;
    d.push(p);
    return all.slice(before).map((x) => x.text);
  });
  const before = all.length;
  d.flush();
  return { perPush, atFlush: all.slice(before).map((x) => x.text), all };
}

/** Every delta extends a prefix of the recorded (scrubbed) text, and all of them make it whole. */
function assertFaithful(key: string, pieces: string[], all: ChatDelta[]): void {
  const recorded = scrub(pieces.join(""), key);
  let sent = "";
  for (const x of all) {
    sent += x.text;
    assert.ok(
      recorded.startsWith(sent),
      `sent so far ${JSON.stringify(sent)} is not a prefix of ${JSON.stringify(recorded)}`,
    );
  }
  assert.equal(sent, recorded);
  assert.deepEqual(
    all.map((x) => x.seq),
    all.map((_, i) => i),
  );
}

const KEY = "sk-live-0123456789abcdef";

test("a key split across two pieces never reaches a delta: the text before it goes at once, the key as [redacted]", () => {
  const pieces = ["Your key is sk-live-01234", "56789abcdef, keep it safe."];
  const { perPush, atFlush, all } = streamed(KEY, pieces);
  assert.deepEqual(perPush, [["Your key is "], ["[redacted], keep it safe."]]);
  assert.deepEqual(atFlush, []);
  for (const x of all) assert.ok(!/sk-|0123|abcdef/.test(x.text), `delta ${JSON.stringify(x.text)}`);
  assertFaithful(KEY, pieces, all);
});

test("a key split across three pieces, and twice in one step, is redacted each time", () => {
  const pieces = [
    "a sk-li",
    "ve-0123456789",
    "abcdef b sk-live-0123456789abcdef c s",
    "k-",
    "live-0123456789abcdef",
  ];
  const { perPush, atFlush, all } = streamed(KEY, pieces);
  assert.deepEqual(perPush, [["a "], [], ["[redacted] b [redacted] c "], [], ["[redacted]"]]);
  assert.deepEqual(atFlush, []);
  for (const x of all) assert.ok(!/sk-|live|0123|abcdef/.test(x.text), `delta ${JSON.stringify(x.text)}`);
  assertFaithful(KEY, pieces, all);
});

test("a key at the very end of the step is sent as [redacted] once whole; a key's start left at the end waits for the flush and is sent as is", () => {
  const ending = streamed(KEY, ["The answer: sk-live-0123456789abc", "def"]);
  assert.deepEqual(ending.perPush, [["The answer: "], ["[redacted]"]]);
  assert.deepEqual(ending.atFlush, []);
  assertFaithful(KEY, ["The answer: sk-live-0123456789abc", "def"], ending.all);

  // Only the start of the key: the recorded text keeps it (it is not the key), and so does the flush.
  const start = streamed(KEY, ["ends with sk-live"]);
  assert.deepEqual(start.perPush, [["ends with "]]);
  assert.deepEqual(start.atFlush, ["sk-live"]);
});

test("text with no key is sent unchanged at once, holding back no more than a tail that could start the key", () => {
  const pieces = ["Hello, ", "here is the plan.\n", "1. read the issue", " 2. fix it"];
  const { perPush, atFlush, all } = streamed(KEY, pieces);
  assert.deepEqual(
    perPush,
    pieces.map((p) => [p]),
  );
  assert.deepEqual(atFlush, []);
  assertFaithful(KEY, pieces, all);

  // A piece ending in what could start the key ("s", "sk-"): only that tail waits, at most the key's length minus one.
  const tails = streamed(KEY, ["this is", " risk-", "free"]);
  assert.deepEqual(tails.perPush, [["this i"], ["s ri"], ["sk-free"]]);
  const long = `x${KEY.slice(0, -1)}`;
  const held = streamed(KEY, [long]);
  assert.deepEqual(held.perPush, [["x"]]);
  assert.equal(long.length - held.perPush[0]![0]!.length, KEY.length - 1);
  assert.deepEqual(held.atFlush, [KEY.slice(0, -1)]);

  // No key (none configured): everything at once, nothing held.
  const none = streamed("", ["sk-", "anything"]);
  assert.deepEqual(none.perPush, [["sk-"], ["anything"]]);
});

test("any split of text holding a self-overlapping key gives deltas that make exactly the recorded text", () => {
  // A deterministic pseudo-random walk (no flaky seeds): texts over {a,b,x} with the key "abab".
  let state = 7;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
  const key = "abab";
  for (let round = 0; round < 500; round++) {
    const text = Array.from({ length: 1 + next(30) }, () => "abx"[next(3)]).join("");
    const pieces: string[] = [];
    for (let at = 0; at < text.length; ) {
      const n = 1 + next(5);
      pieces.push(text.slice(at, at + n));
      at += n;
    }
    const { all } = streamed(key, pieces);
    assertFaithful(key, pieces, all);
  }
});

test("throttled and scrubbed: a key split across pieces pushed faster than the interval still never reaches a delta", async () => {
  const sent: ChatDelta[] = [];
  const d = stepDeltas((x) => sent.push(x), where, 20, KEY);
  const text = `one ${KEY} two ${KEY} three`;
  const pieces = text.match(/.{1,3}/gs) ?? [];
  for (const p of pieces) {
    d.push(p);
    await new Promise((r) => setTimeout(r, 3));
  }
  d.flush();
  assert.equal(sent.map((s) => s.text).join(""), "one [redacted] two [redacted] three");
  for (const s of sent) assert.ok(!/sk-|live|0123|abcdef/.test(s.text), `delta ${JSON.stringify(s.text)}`);
  assertFaithful(KEY, pieces, sent);
});
