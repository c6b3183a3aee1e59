/**
 * scripts/npm-installed.mjs decides whether setup.sh may skip `npm ci`: it must say "current" only when
 * node_modules holds exactly what package-lock.json lists, and name the first difference otherwise.
 * Each case lays out a small repo (lockfile, npm's hidden lockfile, package folders) and runs the script.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

const SCRIPT = join(import.meta.dirname, "../npm-installed.mjs");

type Entry = Record<string, unknown>;
const zod: Entry = { version: "4.6.7", resolved: "https://r.example/zod-4.6.7.tgz", integrity: "sha512-z" };
const esbuildMac: Entry = { version: "0.25.0", optional: true, os: ["darwin"] };
const link: Entry = { resolved: "packages/kit", link: true };
const LOCK: Record<string, Entry> = {
  "": { name: "repo" },
  "node_modules/zod": zod,
  "node_modules/@esbuild/darwin-arm64": esbuildMac,
  "node_modules/@repo/kit": link,
  "packages/kit": { name: "@repo/kit" },
  "packages/kit/node_modules/commander": { version: "14.0.0", integrity: "sha512-c" },
};
const INSTALLED: Record<string, Entry> = {
  "node_modules/zod": zod,
  "node_modules/@repo/kit": link,
  "packages/kit": { name: "@repo/kit" },
  "packages/kit/node_modules/commander": { version: "14.0.0", integrity: "sha512-c" },
};

/** Runs the script on a repo laid out from `lock` and `installed` (undefined = no hidden lockfile). */
function check(lock: Record<string, Entry>, installed: Record<string, Entry> | undefined, onDisk?: string[]) {
  const root = mkdtempSync(join(tmpdir(), "npm-installed-"));
  try {
    writeFileSync(join(root, "package-lock.json"), JSON.stringify({ lockfileVersion: 3, packages: lock }));
    mkdirSync(join(root, "node_modules"));
    if (installed) {
      writeFileSync(
        join(root, "node_modules/.package-lock.json"),
        JSON.stringify({ lockfileVersion: 3, packages: installed }),
      );
    }
    for (const dir of onDisk ?? ["node_modules/zod", "packages/kit/node_modules/commander"]) {
      mkdirSync(join(root, dir), { recursive: true });
      writeFileSync(join(root, dir, "package.json"), "{}");
    }
    const r = spawnSync(process.execPath, [SCRIPT, root], { encoding: "utf8" });
    return { code: r.status, out: r.stdout.trim() };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

test("node_modules as npm ci left it is current: another platform's optional binary may be absent", () => {
  assert.deepEqual(check(LOCK, INSTALLED), { code: 0, out: "" });
});

test("a changed version, a package not installed, an extra package or a deleted folder each need npm ci, named", () => {
  const newer = { ...LOCK, "node_modules/zod": { ...zod, version: "4.7.0" } };
  assert.deepEqual(check(newer, INSTALLED), {
    code: 1,
    out: 'node_modules/zod: version is "4.6.7", the lockfile says "4.7.0"',
  });
  const added = { ...LOCK, "node_modules/yaml": { version: "2.9.1" } };
  assert.deepEqual(check(added, INSTALLED), { code: 1, out: "node_modules/yaml is not installed" });
  const { "node_modules/zod": _gone, ...without } = LOCK;
  assert.deepEqual(check(without, INSTALLED), {
    code: 1,
    out: "node_modules/zod is installed but not in package-lock.json",
  });
  assert.deepEqual(check(LOCK, INSTALLED, ["node_modules/zod"]), {
    code: 1,
    out: "packages/kit/node_modules/commander was removed from disk",
  });
});

test("without npm's record of an install (never installed, or an install that stopped) npm ci runs", () => {
  const r = check(LOCK, undefined);
  assert.equal(r.code, 1);
  assert.match(r.out, /node_modules\/\.package-lock\.json is missing/);
});
