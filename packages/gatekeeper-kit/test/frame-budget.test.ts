/**
 * Reply sizes from the frame cap, measured on the frames a real capnweb session sends: a page of
 * worst-case text sized by textPageBytes always fits its cap, one byte more does not, and
 * cutTextsToFit makes a many-item page fit while keeping every item.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RpcSession, RpcTarget } from "capnweb";
import {
  checkReplyFits,
  cutTextsToFit,
  cutToJsonBytes,
  FrameTransport,
  replyBudget,
  serializedBytes,
  textPageBytes,
} from "../src/index.ts";

/** A server returning whatever `next` holds; `frames` records every frame the server sent. */
class Echo extends RpcTarget {
  next: unknown = null;
  get(): unknown {
    return this.next;
  }
}

function pair() {
  const frames: string[] = [];
  const main = new Echo();
  let client: FrameTransport;
  const server = new FrameTransport({
    onSend: (f) => {
      frames.push(f);
      client.push(f);
    },
  });
  client = new FrameTransport({ onSend: (f) => server.push(f) });
  new RpcSession(server, main);
  const stub = new RpcSession<Echo>(client).getRemoteMain();
  return { main, stub, frames };
}

/** The largest frame the server sent replying with `value`. */
async function replyFrameBytes(value: unknown): Promise<number> {
  const { main, stub, frames } = pair();
  main.next = value;
  await stub.get();
  return Math.max(...frames.map((f) => Buffer.byteLength(f)));
}

const CAP = 4096;
const page = (content: string) => ({ content, page: 1_000_000, more: true, totalBytes: 2 ** 40 });
const FIXED = serializedBytes(page(""));

test("a page of textPageBytes bytes of worst-case text (control characters, 6 JSON bytes each) fits the cap, with the envelope", async () => {
  const n = textPageBytes(CAP, FIXED);
  assert.equal(n, Math.floor((CAP - 64 - FIXED) / 6));
  for (const text of ["\u0001".repeat(n), '"'.repeat(n), "a".repeat(n), "é".repeat(Math.floor(n / 2))]) {
    const bytes = await replyFrameBytes(page(text));
    assert.ok(bytes <= CAP, `a frame of ${bytes} bytes for a page of ${text.length} characters`);
  }
});

test("the serialized size is exact: a reply of replyBudget bytes fits, one byte more is refused before anything else happens", async () => {
  const budget = replyBudget(CAP);
  const exact = "x".repeat(budget - serializedBytes(""));
  assert.equal(serializedBytes(exact), budget);
  assert.ok((await replyFrameBytes(exact)) <= CAP);
  assert.equal(checkReplyFits(exact, CAP, "a test reply", "send less"), budget);
  const over = `${exact}${"\u0001".repeat(20)}`;
  assert.ok((await replyFrameBytes(over)) > CAP, "without the check this frame is over the cap");
  assert.throws(
    () => checkReplyFits(over, CAP, "readFile of a.md", "use readFilePage"),
    (e: Error) =>
      e.name === "ReplyTooLarge" &&
      /readFile of a\.md would be \d+ bytes, over the 4032 bytes one reply may take under the sandbox's frame cap of 4096 bytes \(SANDBOX_MAX_FRAME_BYTES\); nothing was read\. use readFilePage/.test(
        e.message,
      ),
  );
  assert.throws(() => replyBudget(100), /maxFrameBytes must be an integer from 1024/);
});

test("cutTextsToFit cuts the longest texts to a common length, keeps short ones whole, and the frame fits", async () => {
  const matches = [
    { path: "a", text: "short" },
    ...Array.from({ length: 10 }, (_, i) => ({ path: `f${i}`, text: "\u0002".repeat(400) })),
  ];
  const value = { matches, page: 0, more: false };
  assert.ok(serializedBytes(value) > replyBudget(CAP));
  const cut = cutTextsToFit(
    value,
    CAP,
    matches.map((m) => ({
      get: () => m.text,
      set: (t: string) => {
        m.text = `${t}…`;
      },
    })),
    "grep page 0",
    "search for something rarer",
  );
  assert.equal(cut, 10);
  assert.equal(matches[0]!.text, "short");
  assert.equal(matches.length, 11, "every item is kept");
  assert.ok(matches[1]!.text.length > 10, "each cut text keeps as much as fits");
  assert.ok((await replyFrameBytes(value)) <= CAP);
});

test("cutToJsonBytes keeps whole characters within a JSON byte budget", () => {
  assert.equal(cutToJsonBytes("ab\u0001c", 3), "ab");
  assert.equal(cutToJsonBytes("ab\u0001c", 8), "ab\u0001");
  assert.equal(cutToJsonBytes("😀😀", 5), "😀");
  assert.equal(cutToJsonBytes('"x', 2), '"');
});
