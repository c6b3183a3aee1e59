/**
 * Child processes tied to their parent (they die with it, SIGKILL included), the holder of a busy
 * port, and pid files that reap a leftover only when it is provably the one they were written for.
 * Real processes throughout (`sleep`, node servers), Linux only where /proc and setpriv are needed.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import {
  childrenDieWithParent,
  freePort,
  portHolder,
  processInfo,
  reapPidFile,
  spawnTiedToParent,
  waitUntil,
  writePidFile,
} from "../src/index.ts";

const dir = mkdtempSync(join(tmpdir(), "service-kit-procs-"));
const started: ChildProcess[] = [];
after(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** Waits until `check` holds (generous: CI is two busy cores). */
const until = (check: () => boolean, what: string, ms = 60_000) => waitUntil(what, check, { timeoutMs: ms });

/** Spawns a node script and resolves with the process and its first line of output. */
async function node(script: string): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: import.meta.dirname,
    stdio: ["ignore", "pipe", "inherit"],
  });
  started.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  await until(() => out.includes("\n") || child.exitCode !== null, "the script's first line", 60_000);
  return { child, line: out.split("\n")[0] ?? "" };
}

const linux = process.platform === "linux";

test("a child spawned tied to its parent dies when the parent is killed with SIGKILL", {
  skip: !linux,
}, async () => {
  assert.ok(childrenDieWithParent(), "setpriv (util-linux) is installed here");
  const kit = JSON.stringify(join(import.meta.dirname, "../src/index.ts"));
  const { child: parent, line } = await node(
    `import { spawnTiedToParent } from ${kit};
     const c = spawnTiedToParent("sleep", ["600"], { stdio: "ignore" });
     c.once("spawn", () => console.log(c.pid));
     setInterval(() => {}, 1000);`,
  );
  const grandchild = Number(line);
  await until(() => /\bsleep 600\b/.test(processInfo(grandchild)?.command ?? ""), "the sleep to run");
  parent.kill("SIGKILL");
  await until(() => processInfo(grandchild) === undefined, "the tied child to die with its parent");
});

test("a tied command missing from PATH fails as spawn does, with ENOENT", async () => {
  const child = spawnTiedToParent("no-such-command-gatehouse", [], { stdio: "ignore" });
  const err = await new Promise<NodeJS.ErrnoException>((resolve) => child.once("error", resolve));
  assert.equal(err.code, "ENOENT");
});

test("the holder of a busy port is named by pid and command line", { skip: !linux }, async () => {
  const port = await freePort();
  const { child, line } = await node(
    `import { createServer } from "node:net";
     createServer().listen(${port}, "127.0.0.1", () => console.log("listening"));`,
  );
  assert.equal(line, "listening");
  const holder = await portHolder(port);
  assert.equal(holder?.pid, child.pid);
  assert.match(holder?.command ?? "", /createServer/);
  assert.equal(await portHolder(await freePort()), undefined, "nothing listens on a free port");
});

test("a pid file reaps its process only while it is the same process and the caller recognises its command", {
  skip: !linux,
}, async () => {
  const sleeper = () => {
    const c = spawn("sleep", ["600"], { stdio: "ignore" });
    started.push(c);
    return c;
  };
  const ours = sleeper();
  await until(() => /sleep 600/.test(processInfo(ours.pid ?? 0)?.command ?? ""), "sleep to run");
  const file = join(dir, "sleep.pid");

  writePidFile(file, ours.pid ?? 0);
  assert.equal(await reapPidFile(file, (c) => c.includes("temporal")), undefined, "not the expected command");
  assert.ok(processInfo(ours.pid ?? 0), "a process that is not ours is left alone");

  writePidFile(file, ours.pid ?? 0);
  const record = JSON.parse(await import("node:fs").then((fs) => fs.readFileSync(file, "utf8")));
  writeFileSync(file, JSON.stringify({ ...record, startTicks: record.startTicks - 1 }));
  assert.equal(await reapPidFile(file, (c) => c.includes("sleep")), undefined, "a reused pid is not ours");
  assert.ok(processInfo(ours.pid ?? 0));

  writePidFile(file, ours.pid ?? 0);
  const reaped = await reapPidFile(file, (c) => c.includes("sleep 600"));
  assert.equal(reaped?.pid, ours.pid);
  await until(() => processInfo(ours.pid ?? 0) === undefined, "the leftover to be stopped");
});
