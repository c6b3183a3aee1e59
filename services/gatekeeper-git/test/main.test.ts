import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { waitUntil } from "@gatehouse/service-kit";
import { FakeApprovalQueue, makeRepo } from "./helpers.ts";

const MAIN = join(import.meta.dirname, "../src/main.ts");

function run(env: Record<string, string>) {
  const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", MAIN], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
  return { child, exited, output: () => out };
}

test("main refuses a bad environment naming the variable", async () => {
  const p = run({ APPROVAL_ADDRESS: "127.0.0.1:1", GATEKEEPER_GIT_ALLOWED_ROOTS: "relative/dir" });
  assert.equal(await p.exited, 2);
  assert.match(
    p.output(),
    /invalid gatekeeper-git configuration:\n {2}GATEKEEPER_GIT_ALLOWED_ROOTS: must be absolute directories/,
  );
});

test("main serves /healthz and /metrics and stops on SIGTERM", async () => {
  const repo = makeRepo({ "a.txt": "a\n" });
  const approval = await new FakeApprovalQueue().start();
  const p = run({
    APPROVAL_ADDRESS: `127.0.0.1:${approval.port}`,
    GATEKEEPER_GIT_ALLOWED_ROOTS: repo.root,
    GATEKEEPER_GIT_ADDR: "127.0.0.1:0",
    GATEKEEPER_GIT_METRICS_ADDR: "127.0.0.1:0",
  });
  try {
    const ops = await waitUntil(
      "the gatekeeper's ops address",
      () => /"ops":"([^"]+)"/.exec(p.output())?.[1],
    );
    const health = await fetch(`http://${ops}/healthz`);
    assert.equal(health.status, 200);
    const metrics = await (await fetch(`http://${ops}/metrics`)).text();
    assert.match(metrics, /gatekeeper_git_sessions/);
    p.child.kill("SIGTERM");
    assert.equal(await p.exited, 0);
  } finally {
    p.child.kill("SIGKILL");
    approval.close();
    repo.cleanup();
  }
});
