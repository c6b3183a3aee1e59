import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { agentEnvDts } from "../src/agent-dts.ts";

const binding = (name: string, url: string) => ({
  name,
  url,
  gatekeeper: "mcp",
  trust: "vetted",
  methods: ["read"],
  grant: 1,
  dts: `interface ${name} {\n  read(): Promise<string>;\n}`,
});

test("the agent's env declaration names exactly the granted bindings and type-checks a snippet", () => {
  const dts = agentEnvDts([binding("MEMORY", "mcp://memory"), binding("FILES", "mcp://files#tool=*/evil")]);
  assert.match(dts, /interface Env \{/);
  assert.doesNotMatch(dts, /\*\/evil/, "a URL cannot close the doc comment");
  const dir = mkdtempSync(join(tmpdir(), "agent-dts-"));
  try {
    writeFileSync(join(dir, "env.d.ts"), dts);
    writeFileSync(
      join(dir, "snippet.ts"),
      "export default async (env: Env) => [await env.MEMORY.read(), await env.FILES.read()];\n",
    );
    writeFileSync(join(dir, "bad.ts"), "export default async (env: Env) => env.SLACK.read();\n");
    const tsc = resolve(import.meta.dirname, "../../../node_modules/typescript/bin/tsc");
    const check = (file: string) =>
      execFileSync(
        process.execPath,
        [
          tsc,
          "--noEmit",
          "--strict",
          "--skipLibCheck",
          "--target",
          "es2022",
          "--lib",
          "es2022",
          "env.d.ts",
          file,
        ],
        {
          cwd: dir,
          stdio: "pipe",
        },
      );
    check("snippet.ts");
    assert.throws(
      () => check("bad.ts"),
      (err: { stdout?: Buffer }) => /SLACK/.test(String(err.stdout)),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
