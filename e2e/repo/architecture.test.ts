/**
 * Dependency direction (docs/architecture.md "Where things live"): proto ← packages/* ← services/*, sandbox-runner; no service
 * imports another service, and no shared package imports a service — except the CLI, which is the
 * composition root (`gatehouse dev` starts every service in one process).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../../..");
/** Every service package: the folders under services/ plus the sandbox runner. */
const SERVICES = new Set([...readdirSync(join(ROOT, "services")), "sandbox-runner"]);

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "gen" || name === "dist") continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (/\.(ts|tsx|mts)$/.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** The workspace a file belongs to: "services/kernel", "packages/proto", "sandbox-runner". */
function ownerOf(file: string): string {
  const rel = relative(ROOT, file).split("/");
  return rel[0] === "sandbox-runner" ? "sandbox-runner" : `${rel[0]}/${rel[1]}`;
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!);
}

test("no service imports another service and no shared package imports a service (the CLI composes them)", () => {
  const problems: string[] = [];
  const roots = ["packages", "services"].flatMap((d) =>
    readdirSync(join(ROOT, d)).map((n) => join(ROOT, d, n)),
  );
  roots.push(join(ROOT, "sandbox-runner"));
  for (const root of roots) {
    for (const file of tsFiles(root)) {
      const owner = ownerOf(file);
      for (const spec of importsOf(file)) {
        const pkg = /^@gatehouse\/([^/]+)/.exec(spec)?.[1];
        if (pkg && SERVICES.has(pkg)) {
          const self = owner === `services/${pkg}` || owner === pkg;
          if (!self && owner !== "packages/cli") problems.push(`${relative(ROOT, file)} imports ${spec}`);
        }
        if (spec.startsWith(".")) {
          const target = ownerOf(resolve(file, "..", spec));
          if (target !== owner) problems.push(`${relative(ROOT, file)} reaches into ${target} via ${spec}`);
        }
      }
    }
  }
  assert.deepEqual(problems, []);
});
