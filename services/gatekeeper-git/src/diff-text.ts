/**
 * Unified diffs for approver descriptions and diff reads, made by `git diff --no-index` on temp
 * files (no repository is touched).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git } from "./git.ts";
import type { FileChange } from "./state.ts";

/**
 * Unified diff of `changes` against `old` (null = absent; undefined = too large to show, which makes
 * the diff incomplete), via `git diff --no-index` on temp files (the repository is not touched).
 */
export async function unifiedDiff(
  changes: readonly FileChange[],
  old: Map<string, string | null | undefined>,
  maxFileBytes: number,
): Promise<{ text: string; complete: boolean }> {
  const dir = await mkdtemp(join(tmpdir(), "gk-git-diff-"));
  try {
    const parts: string[] = [];
    let complete = true;
    for (const [i, c] of changes.entries()) {
      const before = old.get(c.path);
      if (before === undefined && old.has(c.path)) {
        complete = false;
        const what = "delete" in c ? "deleted" : "replaced";
        parts.push(
          `--- a/${c.path}\n+++ ${"delete" in c ? "/dev/null" : `b/${c.path}`}\n(previous content is binary or over ${maxFileBytes} bytes and is not shown; the file is ${what} entirely)\n`,
        );
        continue;
      }
      if ("blob" in c) {
        parts.push(
          `--- a/${c.path}\n+++ b/${c.path}\n(restores blob ${c.blob}, mode ${c.mode}; content not shown)\n`,
        );
        continue;
      }
      const after = "delete" in c ? null : c.content;
      const a = join(dir, `a${i}`);
      const b = join(dir, `b${i}`);
      await writeFile(a, before ?? "");
      await writeFile(b, after ?? "");
      const out = (
        await git("", ["diff", "--no-index", "--no-color", "--no-ext-diff", "--", a, b], {
          okCodes: [0, 1],
        })
      ).toString("utf8");
      const hunks = out.slice(Math.max(0, out.indexOf("\n@@") + 1));
      const head = `--- ${before === null ? "/dev/null" : `a/${c.path}`}\n+++ ${after === null ? "/dev/null" : `b/${c.path}`}\n`;
      if (/^Binary files .* differ$/m.test(out)) parts.push(`${head}(binary content differs; not shown)\n`);
      else parts.push(out.includes("\n@@") ? head + hunks : `${head}(no content change)\n`);
    }
    return { text: parts.join(""), complete };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
