/**
 * Every reply of a git binding fits one frame under the sandbox's cap (here a small one, 4096
 * bytes, so the edges are cheap to reach), measured on the frames the gatekeeper really sends:
 * readFilePage pages are sized from the cap for the worst text, log/grep/diff pages cut their
 * longest texts, and a reply that cannot fit is refused before its observation is recorded.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { connectSession } from "@gatehouse/gatekeeper-kit";
import { filePageBytes } from "../src/reads.ts";
import { type Harness, makeRepo, type RepoApi, rejects, startHarness, type TestRepo } from "./helpers.ts";

const CAP = 4096;
const PAGE = filePageBytes({ maxFrameBytes: CAP });

let repo: TestRepo;
let h: Harness;
let frames: string[];
let r: RepoApi;
let close: () => void;

/** Text of `bytes` bytes cycling through characters that JSON escapes to 6 bytes (and a few to 2). */
function worst(bytes: number): string {
  let s = "";
  for (let i = 0; i < bytes; i++) s += String.fromCharCode([1, 2, 0x1f, 3][i % 4]!);
  return s;
}

beforeEach(async () => {
  repo = makeRepo({
    "under.txt": worst(PAGE - 1),
    "at.txt": worst(PAGE),
    "over.txt": worst(PAGE + 1),
    "quotes.txt": '"\\'.repeat(PAGE),
    "wide.txt": "é漢😀".repeat(PAGE),
    "small.txt": worst(100),
    "big.txt": worst(2000),
  });
  h = await startHarness([repo.root], { maxFrameBytes: CAP });
  frames = [];
  const call = h.client.openSession();
  call.on("data", (m: { frame: string }) => frames.push(m.frame));
  const s = connectSession<RepoApi & Record<string, never>>(call, {
    workspaceId: "ws-1",
    binding: "REPO",
    url: repo.url,
    trust: "byo",
    callerToken: "token-1",
    executionId: "exec-1",
  });
  r = s.stub as unknown as RepoApi;
  close = () => s.close();
});
afterEach(async () => {
  close();
  await h.close();
  repo.cleanup();
});

function largestFrame(): number {
  return Math.max(0, ...frames.map((f) => Buffer.byteLength(f)));
}

async function readAll(path: string): Promise<{ text: string; pages: number }> {
  let text = "";
  for (let page = 0; ; page++) {
    const c = await r.readFilePage({ path, page });
    text += c.content;
    if (!c.more) return { text, pages: page + 1 };
  }
}

test("readFilePage at the cap's edge: worst-case text of page-1, page and page+1 bytes takes 1, 1 and 2 pages, every frame fits, every byte comes back", async () => {
  assert.ok(PAGE > 500 && PAGE < CAP / 6, `page of ${PAGE} bytes for a cap of ${CAP}`);
  for (const [path, bytes, pages] of [
    ["under.txt", PAGE - 1, 1],
    ["at.txt", PAGE, 1],
    ["over.txt", PAGE + 1, 2],
  ] as const) {
    const got = await readAll(path);
    assert.equal(got.pages, pages, path);
    assert.equal(got.text, worst(bytes), `${path} comes back byte for byte`);
  }
  assert.equal((await readAll("quotes.txt")).text, '"\\'.repeat(PAGE));
  const wide = await readAll("wide.txt");
  assert.equal(wide.text, "é漢😀".repeat(PAGE), "multi-byte characters are never split");
  assert.ok(largestFrame() <= CAP, `largest frame ${largestFrame()} bytes, cap ${CAP}`);
  const observed = h.approval.observations.filter((o) => o.kind === "git.readFilePage").length;
  assert.equal(observed, 1 + 1 + 2 + 2 + wide.pages, "one observation per page returned");
});

test("readFile of content whose reply would not fit one frame is refused before anything is recorded", async () => {
  assert.equal(await r.readFile({ path: "small.txt" }), worst(100));
  await rejects(
    r.readFile({ path: "big.txt" }),
    /readFile of big\.txt would be \d+ bytes, over the 4032 bytes one reply may take under the sandbox's frame cap of 4096 bytes \(SANDBOX_MAX_FRAME_BYTES\); nothing was read\. Read it in pages with readFilePage/,
  );
  assert.deepEqual(
    h.approval.observations.map((o) => o.title),
    ["Read small.txt from repo.git"],
    "the refused read recorded no observation",
  );
  assert.ok(largestFrame() <= CAP);
});

test("log, grep and diff pages cut their longest texts to fit one frame; a listFiles page that cannot fit is refused, recording nothing", async () => {
  await r.commit({
    branch: "main",
    message: `long message ${"\u0001".repeat(3000)}`,
    changes: [
      { path: "a.txt", content: `needle ${"x".repeat(3000)}\n` },
      { path: "b.txt", content: `needle short\n${"\u0003".repeat(3000)}\n` },
    ],
  });
  const log = await r.log({});
  const message = log.commits[0]!.message;
  assert.ok(message.startsWith("long message \u0001"), "the message keeps its start");
  assert.ok(message.endsWith("\u0001\n(cut to fit one reply)"), "and says it was cut");
  assert.equal(log.commits.length, 2, "every commit of the page is kept");
  const g = await r.grep({ pattern: "needle" });
  assert.deepEqual(
    g.matches.map((m) => [m.path, m.line]),
    [
      ["a.txt", 1],
      ["b.txt", 1],
    ],
  );
  assert.equal(g.matches[1]!.text, "needle short", "a short line stays whole");
  const d = await r.diff({ from: "main" });
  assert.deepEqual(
    d.files.map((f) => [f.path, f.complete]),
    [
      ["a.txt", false],
      ["b.txt", false],
    ],
  );
  assert.match(d.files[1]!.patch, /\n\(cut to fit one reply\)\n$/);
  assert.ok(largestFrame() <= CAP, `largest frame ${largestFrame()} bytes`);
  const before = h.approval.observations.length;
  const long = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`${"d".repeat(120)}/${i}.txt`, "x"]));
  repo.commitAndPush(long, "many long paths");
  await rejects(
    r.listFiles({}),
    /listFiles page 0 would be \d+ bytes, over the 4032 bytes one reply may take .*; nothing was read\. Its paths are too long for one reply/,
  );
  assert.equal(h.approval.observations.length, before, "the refused page recorded nothing");
});
