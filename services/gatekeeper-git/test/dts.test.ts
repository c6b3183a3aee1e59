import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, test } from "node:test";
import { generateGitDts, parseGitResource } from "../src/index.ts";
import { makeRepo } from "./helpers.ts";

const repo = makeRepo({ "docs/a.md": "a\n" });
after(() => repo.cleanup());
const policy = { allowedRoots: [repo.root], remotes: [], cacheDir: join(repo.root, "cache") };

test("the agent's .d.ts type-checks and agent code using it compiles", () => {
  const dts = generateGitDts("REPO", parseGitResource(`${repo.url}#branch=main&path=docs/`, policy));
  assert.match(dts, /Branch: main only\. Paths under docs\/ only\./);
  const file = join(repo.root, "agent.ts");
  writeFileSync(
    file,
    `${dts}
declare const env: { REPO: REPO };
export async function run(): Promise<string> {
  const page = await env.REPO.listFiles({ page: 0 });
  const text: string = await env.REPO.readFile({ path: page.files[0] ?? "docs/a.md" });
  const g = await env.REPO.grep({ pattern: "x" });
  const c = await env.REPO.commit({ branch: "main", message: "m", changes: [{ path: "docs/b.md", content: text }, { path: "docs/a.md", delete: true }] });
  const log = await env.REPO.log();
  const chunk = await env.REPO.readFilePage({ path: "docs/a.md", page: 1 });
  const d = await env.REPO.diff({ from: "~1", to: "main", page: 0 });
  const nb = await env.REPO.createBranch({ name: "topic", from: "main" });
  const p = await env.REPO.push({ branch: "topic", remote: "origin" });
  const n: number = chunk.totalBytes + (chunk.more ? 1 : 0);
  return g.matches[0]?.path + c.id + log.commits.map((e) => e.id).join(",") + d.files.map((f) => f.status + f.patch).join("") + nb.id + p.id + n;
}
`,
  );
  const tsc = resolve(import.meta.dirname, "../../../node_modules/.bin/tsc");
  try {
    execFileSync(tsc, ["--noEmit", "--strict", "--target", "es2022", "--lib", "es2022", file], {
      encoding: "utf8",
      cwd: repo.root, // no @types from the workspace: the agent sees only the .d.ts
    });
  } catch (e) {
    assert.fail(`tsc rejected the .d.ts: ${(e as { stdout?: string }).stdout ?? e}`);
  }
});
