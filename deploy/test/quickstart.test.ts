/**
 * docs/helm.md's Quickstart, run as written on the local cluster: the ```sh blocks after a
 * `<!-- quickstart -->` marker (and the one after `<!-- quickstart: setup -->`) are extracted in
 * document order and run in ONE bash shell (`set -euo pipefail`, from the repository root), so a doc
 * change that breaks them fails here. One `helm install` of the evaluation profile in a fresh namespace,
 * then the CLI through the gateway alone: a workspace, the memory MCP server connected, a snippet with a
 * read and a write, the write approved and applied, the log verified, the entity read back, the release
 * removed.
 *
 * The setup block is checked line by line against what this test knows, because one of its lines is
 * costly: `npm run images -- --load` (several minutes) runs only when the node lacks the images or they
 * were built without the memory server; the others run as written (`npm run cluster -- up` reuses a
 * running cluster, the evaluation image is skipped when the node has it).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import { after, test } from "node:test";
import { clusterEnv, ensureCluster, kubectl, REPO, type TestCluster } from "./cluster.ts";
import { helm } from "./helm.ts";
import { ensureImages } from "./install.ts";

/** The namespace, release and local port the Quickstart names. */
const NS = "gatehouse";
const RELEASE = "gh";
const PORT = 8780;

/** The setup block as docs/helm.md has it; a change there must be mirrored here. */
const SETUP = [
  "npm run cluster -- up",
  'eval "$(npm run --silent cluster -- env)"',
  "npm run images -- --load",
  "npm run images -- --load --only evaluation",
];

interface Block {
  setup: boolean;
  text: string;
}

/** The Quickstart's marked ```sh blocks in document order. @throws Error when a marker has no block after it. */
export function quickstartBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const re = /<!-- quickstart(: setup)? -->\n+```sh\n([\s\S]*?)\n```/g;
  const markers = markdown.match(/<!-- quickstart(: setup)? -->/g)?.length ?? 0;
  for (const m of markdown.matchAll(re)) blocks.push({ setup: !!m[1], text: m[2]! });
  if (blocks.length !== markers) {
    throw new Error(
      `docs/helm.md has ${markers} quickstart marker(s) but ${blocks.length} of them are followed directly by a \`\`\`sh block`,
    );
  }
  return blocks;
}

let cluster: TestCluster | undefined;
let group: number | undefined;

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(false);
    });
    s.once("error", () => resolve(true));
  });
}

after(async () => {
  if (!cluster) return; // only the block check ran: no cluster touched
  if (group !== undefined) {
    try {
      process.kill(-group, "SIGTERM");
    } catch {}
  }
  // Only when the script stopped before its own clean-up block.
  await helm(["uninstall", RELEASE, "-n", NS, "--wait"], { env: clusterEnv() }).catch(() => {});
  await kubectl(["delete", "namespace", NS, "--wait=true", "--ignore-not-found"], { timeoutMs: 300_000 });
  await cluster?.stop();
});

test("docs/helm.md's quickstart blocks are found, the setup block is the one this test knows", () => {
  const blocks = quickstartBlocks(readFileSync(join(REPO, "docs/helm.md"), "utf8"));
  assert.equal(blocks.filter((b) => b.setup).length, 1);
  assert.deepEqual(blocks.find((b) => b.setup)!.text.split("\n"), SETUP);
  assert.ok(blocks.length >= 4, `${blocks.length} blocks`);
});

test("the Quickstart, as written: one helm install of the evaluation profile, then the CLI through the gateway alone", async () => {
  const blocks = quickstartBlocks(readFileSync(join(REPO, "docs/helm.md"), "utf8"));
  cluster = await ensureCluster();
  // A fresh namespace: whatever an earlier run left is removed first.
  await kubectl(["delete", "namespace", NS, "--wait=true", "--ignore-not-found"], { timeoutMs: 300_000 });
  assert.ok(
    await portFree(PORT),
    `port ${PORT} (the Quickstart's port-forward) is taken: stop what holds it`,
  );
  // The costly setup line, only when needed: the node's services image must be this checkout's, with the
  // memory MCP server in it (deploy/images/out keeps the root file system of the last build).
  const memoryServer = join(REPO, "deploy/images/out/services/rootfs/app/mcp/memory/server.mjs");
  if (!existsSync(memoryServer)) {
    const r = await runScript("npm run images -- --load", 60 * 60_000);
    assert.equal(r.code, 0, r.output);
  }
  await ensureImages();
  // The CLI the docs run is the compiled one (npm run setup builds it): rebuilt when a source is newer.
  const dist = join(REPO, "apps/cli/dist/main.js");
  if (!existsSync(dist) || statSync(dist).mtimeMs < statSync(join(REPO, "apps/cli/src/gateway.ts")).mtimeMs) {
    const r = await runScript("npm run --silent build -w apps/cli", 10 * 60_000);
    assert.equal(r.code, 0, r.output);
  }

  const parts: string[] = [];
  for (const b of blocks) {
    if (b.setup) {
      parts.push(SETUP.filter((l) => l !== "npm run images -- --load").join("\n"));
      continue;
    }
    parts.push(b.text);
    // A probe after the install (not a doc command): what the claims bound to.
    if (b.text.includes("helm install")) {
      parts.push(
        `echo "probe: claims $(kubectl -n ${NS} get pvc -o jsonpath='{range .items[*]}{.metadata.name}={.spec.storageClassName}/{.status.phase} {end}')"`,
      );
    }
  }
  const t0 = Date.now();
  const r = await runScript(parts.join("\n"), 25 * 60_000);
  const seconds = Math.round((Date.now() - t0) / 1000);
  console.log(`quickstart: ${seconds} s from setup to clean-up`);
  assert.equal(r.code, 0, `the Quickstart failed (exit ${r.code}):\n${r.output.slice(-6000)}`);
  const out = r.output;
  assert.match(out, /EVALUATION PROFILE: NOT FOR PRODUCTION/, "NOTES say it");
  assert.match(
    out,
    /probe: claims gh-gatehouse-data=local-path\/Bound gh-gatehouse-temporal=local-path\/Bound/,
    "both claims bound by the default StorageClass",
  );
  assert.match(out, /^MEMORY\t/m, "connect printed the binding");
  assert.match(out, /^read #\d+ MEMORY: /m, "the read is recorded");
  assert.match(out, /^submitted for approval #\d+ MEMORY: /m, "the write is held for approval");
  assert.match(out, /^#\d+\tapplied\tMEMORY\t/m, "approved and applied");
  assert.match(out, /^ok: \d+ events .*hash chain intact/m, "verified");
  assert.match(out, /=> ".*written after approval.*"/, "the entity is read back");
  assert.doesNotMatch(out, /port-forward svc\/gh-gatehouse-(kernel|approval)/);
});

/** Runs `script` in bash (set -euo pipefail) from the repository root, in its own process group. */
function runScript(script: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", `set -euo pipefail\n${script}`], {
      cwd: REPO,
      detached: true,
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    group = child.pid;
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    const timer = setTimeout(() => {
      output += `\n(timed out after ${timeoutMs / 1000} s)`;
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {}
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      // What the script left in its group (the port-forward when it stopped early).
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {}
      group = undefined;
      resolve({ code, output });
    });
  });
}
