import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { ResolveResourceResponse } from "@gatehouse/proto";
import { gitTrace } from "../src/git.ts";
import { type Harness, makeRepo, rejects, sh, startHarness, type TestRepo } from "./helpers.ts";

let repo: TestRepo;
let h: Harness;

before(async () => {
  repo = makeRepo({
    "README.md": "top\n",
    "docs/guide.md": "guide\n",
    "docs/inner/ok.md": "ok\n",
    "docs/link-out": { link: "../src/secret.ts" },
    "docs/dir-out": { link: "../src" },
    "docs/link-in": { link: "inner/ok.md" },
    "docs/big.txt": "x".repeat(1024 * 1024 + 1),
    "src/secret.ts": "secret\n",
  });
  h = await startHarness([repo.root]);
});
after(async () => {
  await h.close();
  repo.cleanup();
});

test("ResolveResource publishes the binding's action kinds (commit, createBranch, push, revert), none auto-approvable, each with why", async () => {
  const res = await new Promise<ResolveResourceResponse>((ok, ko) =>
    h.client.resolveResource({ url: repo.url, name: "" }, (e, r) => (e ? ko(e) : ok(r))),
  );
  const kinds = res.actionKinds?.kinds ?? [];
  assert.deepEqual(
    kinds.map((k) => k.tag),
    ["git.commit", "git.createBranch", "git.push", "git.revert"],
  );
  for (const k of kinds) {
    assert.equal(k.autoApprovable, false, k.tag);
    assert.match(k.notAutoApprovableReason, /needs a person/);
  }
});

test("ResolveResource returns the binding, methods, normalized URL and a d.ts", async () => {
  const res = await new Promise<{ binding: string; methods: string[]; dts: string; url: string }>((ok, ko) =>
    h.client.resolveResource({ url: `${repo.url}#path=docs/`, name: "" }, (e, r) => (e ? ko(e) : ok(r))),
  );
  assert.equal(res.binding, "REPO");
  assert.deepEqual(res.methods, [
    "listFiles",
    "readFile",
    "readFilePage",
    "log",
    "grep",
    "diff",
    "commit",
    "createBranch",
    "push",
  ]);
  assert.equal(res.url, `${repo.url}#path=docs/`);
  assert.match(res.dts, /interface REPO \{/);
  assert.match(res.dts, /readFile\(args: \{ path: string; ref\?: string \}\): Promise<string>;/);
  await assert.rejects(
    new Promise((ok, ko) =>
      h.client.resolveResource({ url: "git+https://example.com/x.git", name: "" }, (e, r) =>
        e ? ko(e) : ok(r),
      ),
    ),
    /no administrator-allowed remote covers/,
  );
});

test("reads are observed before data returns; a failing read records nothing", async () => {
  const { repo: r } = h.open(repo.url);
  const before = h.approval.observations.length;
  assert.equal(await r.readFile({ path: "README.md" }), "top\n");
  const listing = await r.listFiles();
  assert.ok(listing.files.includes("docs/guide.md"));
  assert.ok(listing.files.includes("src/secret.ts"));
  const log = await r.log();
  assert.deepEqual(
    log.commits.map((c) => c.message),
    ["initial"],
  );
  const kinds = h.approval.observations.slice(before).map((o) => o.kind);
  assert.deepEqual(kinds, ["git.readFile", "git.listFiles", "git.log"]);
  const n = h.approval.observations.length;
  await rejects(r.readFile({ path: "docs/big.txt" }), /over the read limit of 1048576 bytes/);
  await rejects(r.readFile({ path: "nope.md" }), /is not a file/);
  await rejects(r.listFiles({ ref: "no-such-branch" }), /does not name a commit/);
  assert.equal(h.approval.observations.length, n, "failed reads record nothing");
});

test("#path=docs/ scope: outside paths, '..' and symlinks out are refused without git touching them", async () => {
  const { repo: r } = h.open(`${repo.url}#path=docs/`);
  await r.readFile({ path: "docs/guide.md" }); // the session is open before tracing starts
  const calls: string[][] = [] as string[][];
  gitTrace.listener = (args) => calls.push([...args]);
  try {
    const n = h.approval.observations.length;
    await rejects(r.readFile({ path: "src/secret.ts" }), /outside this binding's scope/);
    await rejects(r.readFile({ path: "docs/../src/secret.ts" }), /must not contain '\.\.'/);
    await rejects(r.readFile({ path: "/etc/passwd" }), /relative/);
    await rejects(
      r.commit({ branch: "main", message: "x", changes: [{ path: "src/x.ts", content: "x" }] }),
      /outside this binding's scope/,
    );
    assert.deepEqual([...calls], [], "no git call at all for paths refused up front");
    await rejects(
      r.readFile({ path: "docs/link-out" }),
      /points to a path that is outside this binding's scope/,
    );
    await rejects(r.readFile({ path: "docs/dir-out/secret.ts" }), /outside this binding's scope/);
    await rejects(
      r.commit({ branch: "main", message: "x", changes: [{ path: "docs/dir-out/secret.ts", content: "x" }] }),
      /outside this binding's scope/,
    );
    await rejects(
      r.commit({ branch: "main", message: "x", changes: [{ path: "docs/link-out", content: "x" }] }),
      /outside this binding's scope/,
    );
    for (const args of calls) {
      assert.ok(
        !args.some((a) => a.includes("src/") || a === "src"),
        `git ran on an escaped path: ${args.join(" ")}`,
      );
    }
    assert.equal(h.approval.observations.length, n, "refusals record nothing");
    assert.equal(
      await r.readFile({ path: "docs/link-in" }),
      "ok\n",
      "a symlink inside the scope is followed",
    );
    const listing = await r.listFiles();
    assert.ok(
      listing.files.every((f) => f.startsWith("docs/")),
      listing.files.join(","),
    );
  } finally {
    gitTrace.listener = null;
  }
});

test("a 10k-file listing is paged by 1000 and each page is observed separately", async () => {
  const big = makeRepo({ "seed.txt": "s\n" });
  try {
    for (let d = 0; d < 10; d++) {
      mkdirSync(join(big.work, `d${d}`));
      for (let i = 0; i < 1000; i++)
        writeFileSync(join(big.work, `d${d}`, `f${String(i).padStart(4, "0")}.txt`), `${i}\n`);
    }
    sh(big.work, "add", "-A");
    sh(big.work, "commit", "-q", "-m", "many files");
    sh(big.work, "push", "-q", big.bare, "main");
    const h2 = await startHarness([big.root]);
    try {
      const { repo: r } = h2.open(big.url);
      const seen: string[] = [];
      let page = 0;
      for (;;) {
        const p = await r.listFiles({ page });
        assert.ok(p.files.length <= 1000);
        seen.push(...p.files);
        if (!p.more) break;
        page++;
      }
      assert.equal(seen.length, 10_001);
      assert.equal(new Set(seen).size, 10_001);
      assert.equal(page, 10);
      assert.deepEqual(
        h2.approval.observations.map((o) => o.page),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      );
      assert.ok(h2.approval.observations.every((o) => o.kind === "git.listFiles"));
    } finally {
      await h2.close();
    }
  } finally {
    big.cleanup();
  }
});

test("a session whose repository cannot be opened answers every call at once with the reason", async () => {
  const { repo: r } = h.open(`git+file://${repo.root}/moved-away.git`);
  const observed = h.approval.observations.length;
  const began = Date.now();
  await rejects(r.listFiles(), /not an existing directory/);
  await rejects(r.commit({ branch: "main", message: "m", changes: [] }), /not an existing directory/);
  assert.ok(Date.now() - began < 5000, "no wait for a timeout");
  assert.equal(h.approval.observations.length, observed, "nothing recorded");
});
