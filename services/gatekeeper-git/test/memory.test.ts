/**
 * Memory bounds, measured on a gatekeeper-git process (src/main.ts as a child, its V8 heap capped
 * at 40 MiB, so holding a 50 MB file as a string would crash it): a 10k-file listing is paged and
 * a 50 MB file is read page by page (one git process for the whole walk), each page observed, while the child's peak resident set
 * (VmHWM from /proc) grows by less than 40 MiB.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import {
  connectSession,
  DEFAULT_MAX_FRAME_BYTES,
  replyBudget,
  serializedBytes,
} from "@gatehouse/gatekeeper-kit";
import { GatekeeperClient } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { credentials } from "@grpc/grpc-js";
import { DEFAULT_LIMITS } from "../src/binding.ts";
import { filePageBytes } from "../src/reads.ts";
import { FakeApprovalQueue, makeRepo, type RepoApi, sh, type TestRepo } from "./helpers.ts";

const MAIN = join(import.meta.dirname, "../src/main.ts");
const MB = 1024 * 1024;
const FILE_BYTES = 50 * MB;
/** readFilePage's page under the default frame cap (what src/main.ts runs with here). */
const PAGE = filePageBytes(DEFAULT_LIMITS);
const PAGES = Math.ceil(FILE_BYTES / PAGE);

let repo: TestRepo;
let approval: FakeApprovalQueue;
let child: ReturnType<typeof spawn>;
let client: GatekeeperClient;
let fileSha = "";

/** Peak resident set of the child so far, bytes (VmHWM). */
function peakRss(): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1];
  return Number(kb) * 1024;
}

before(async () => {
  repo = makeRepo({ "seed.txt": "s\n" });
  // 50 MB of text with multi-byte characters, so page boundaries fall inside them.
  const line = Buffer.from("0123456789 é ü 漢字 abcdefghijklmnopqrstuvwxyz\n");
  const big = Buffer.alloc(FILE_BYTES);
  for (let i = 0; i < FILE_BYTES; i += line.length)
    line.copy(big, i, 0, Math.min(line.length, FILE_BYTES - i));
  // Keep the tail valid UTF-8: end with a newline.
  big[FILE_BYTES - 1] = 0x0a;
  for (let i = FILE_BYTES - 2; i > FILE_BYTES - 8; i--) big[i] = 0x2e;
  fileSha = createHash("sha256").update(big).digest("hex");
  writeFileSync(join(repo.work, "big.txt"), big);
  for (let d = 0; d < 10; d++) {
    mkdirSync(join(repo.work, `d${d}`));
    for (let i = 0; i < 1000; i++) writeFileSync(join(repo.work, `d${d}`, `f${i}.txt`), `${i}\n`);
  }
  sh(repo.work, "add", "-A");
  sh(repo.work, "commit", "-q", "-m", "big");
  sh(repo.work, "push", "-q", repo.bare, "main");
  approval = await new FakeApprovalQueue().start();
  child = spawn(
    process.execPath,
    ["--no-node-snapshot", "--max-old-space-size=40", "--import", "tsx", MAIN],
    {
      env: {
        PATH: process.env.PATH ?? "",
        APPROVAL_ADDRESS: `127.0.0.1:${approval.port}`,
        GATEKEEPER_GIT_ALLOWED_ROOTS: repo.root,
        GATEKEEPER_GIT_ADDR: "127.0.0.1:0",
        GATEKEEPER_GIT_METRICS_ADDR: "127.0.0.1:0",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  const grpc = await waitUntil("the gatekeeper's start-up line", () => {
    if (child.exitCode !== null) throw new Error(`gatekeeper exited with ${child.exitCode}: ${out}`);
    return /"grpc":"([^"]+)"/.exec(out)?.[1];
  });
  client = new GatekeeperClient(grpc, credentials.createInsecure());
});

after(async () => {
  client?.close();
  child?.kill("SIGKILL");
  approval?.close();
  repo?.cleanup();
});

function open(): { repo: RepoApi; close(): void } {
  const s = connectSession<RepoApi & Record<string, never>>(client.openSession(), {
    workspaceId: "ws-1",
    binding: "REPO",
    url: repo.url,
    trust: "byo",
    callerToken: "token-1",
    executionId: "exec-1",
  });
  return { repo: s.stub as unknown as RepoApi, close: () => s.close() };
}

test("a 10k-file listing is paged by 1000, each page observed, within memory bounds", async () => {
  const s = open();
  try {
    const baseline = peakRss();
    let seen = 0;
    let page = 0;
    for (;;) {
      const p = await s.repo.listFiles({ page });
      seen += p.files.length;
      if (!p.more) break;
      page++;
    }
    assert.equal(seen, 10_002);
    assert.equal(approval.observations.filter((o) => o.kind === "git.listFiles").length, 11);
    const grew = peakRss() - baseline;
    console.log(`# 10k-file listing in 11 pages: peak RSS grew ${(grew / MB).toFixed(1)} MiB`);
    assert.ok(grew < 40 * MB, `peak RSS grew ${(grew / MB).toFixed(1)} MiB listing 10k files`);
  } finally {
    s.close();
  }
});

test("a 50 MB file: readFile refuses it clearly; readFilePage streams it in observed pages that each fit one frame, within memory bounds", async () => {
  const s = open();
  try {
    await s.repo.readFile({ path: "seed.txt" });
    const baseline = peakRss();
    await assert.rejects(
      (async () => await s.repo.readFile({ path: "big.txt" }))(),
      /is 52428800 bytes, over the read limit of 1048576 bytes; nothing was read\. Read it in pages/,
    );
    const hash = createHash("sha256");
    let bytes = 0;
    let page = 0;
    for (;;) {
      const c = await s.repo.readFilePage({ path: "big.txt", page });
      assert.equal(c.totalBytes, FILE_BYTES);
      const len = Buffer.byteLength(c.content);
      assert.ok(
        len <= PAGE + 3 && (len >= PAGE - 3 || !c.more),
        `page ${page} is ${len} bytes: the page size, both ends moved to whole characters`,
      );
      assert.ok(serializedBytes(c) <= replyBudget(DEFAULT_MAX_FRAME_BYTES), `page ${page} fits one frame`);
      assert.ok(!c.content.includes("\uFFFD"), `page ${page} split a character`);
      hash.update(c.content);
      bytes += Buffer.byteLength(c.content);
      if (!c.more) break;
      page++;
    }
    assert.equal(page, PAGES - 1);
    assert.equal(bytes, FILE_BYTES);
    assert.equal(hash.digest("hex"), fileSha, "the pages put together are the file");
    const pages = approval.observations.filter((o) => o.kind === "git.readFilePage").map((o) => o.page);
    assert.deepEqual(
      pages,
      Array.from({ length: PAGES }, (_, i) => i),
      "each page observed once",
    );
    const grew = peakRss() - baseline;
    console.log(`# 50 MB file in ${PAGES} pages: peak RSS grew ${(grew / MB).toFixed(1)} MiB`);
    assert.ok(grew < 40 * MB, `peak RSS grew ${(grew / MB).toFixed(1)} MiB reading a 50 MiB file`);
  } finally {
    s.close();
  }
});
