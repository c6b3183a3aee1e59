import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pino from "pino";
import { loadConfig } from "../src/config.ts";
import { findRunsc } from "../src/gvisor/detect.ts";
import { isGvisorKernel, readKernel } from "../src/gvisor/kernel.ts";
import { selectBackend } from "../src/layer.ts";
import { buildIsolateHostOnce } from "./helpers.ts";

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), "..");
const run = promisify(execFile);
const RUNSC = findRunsc();
const REQUIRE_GVISOR = process.env.CI === "true" || process.env.GATEHOUSE_REQUIRE_GVISOR === "1";

test("/proc/version texts: gVisor's (old and new releases) are recognised, Linux kernels' are not", () => {
  const rows: Array<[string, boolean]> = [
    ["Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016", true],
    ["Linux version 4.19.0-gvisor #1 SMP Sun Jan 10 15:06:54 PST 2016", true],
    [
      "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-115) (x86_64-linux-gnu-gcc-13) #45-Ubuntu SMP",
      false,
    ],
    [
      "Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1",
      false,
    ],
    [
      "Linux version 4.4.0-210-generic (buildd@lgw01-amd64-009) #242-Ubuntu SMP Fri Apr 16 09:57:56 UTC 2021",
      false,
    ],
    ["", false],
  ];
  for (const [text, gvisor] of rows) assert.equal(isGvisorKernel(text), gvisor, text);
  assert.deepEqual(readKernel("/nonexistent/proc/version"), { gvisor: false, procVersion: "" });
});

test("SANDBOX_MODE accepts gvisor-pod and names the choices when wrong", () => {
  assert.equal(loadConfig({ SANDBOX_MODE: "gvisor-pod" }).mode, "gvisor-pod");
  assert.throws(() => loadConfig({ SANDBOX_MODE: "gvisor_pod" }), /SANDBOX_MODE.*gvisor-pod/);
});

test("selectBackend: gvisor-pod on a gVisor kernel gives child processes with isolation gvisor-pod and no warning; on a Linux kernel it refuses, naming the RuntimeClass", async () => {
  const isolateHostPath = await buildIsolateHostOnce();
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-kernel-"));
  try {
    const gvisor = join(dir, "gvisor");
    const linux = join(dir, "linux");
    await writeFile(gvisor, "Linux version 4.19.0-gvisor #1 SMP Sun Jan 10 15:06:54 PST 2016\n");
    await writeFile(linux, "Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) #1 SMP Debian\n");
    const base = {
      insecureNoGvisor: false,
      isolateHostPath,
      cgroups: null,
      logger: pino({ level: "silent" }),
    };
    for (const mode of ["gvisor-pod", "auto"] as const) {
      const backend = await selectBackend({ ...base, mode, procVersionPath: gvisor });
      assert.equal(backend.kind, "process");
      assert.equal(backend.isolation, "gvisor-pod", mode);
      assert.deepEqual(backend.warnings, []);
    }
    for (const insecureNoGvisor of [false, true]) {
      await assert.rejects(
        selectBackend({ ...base, insecureNoGvisor, mode: "gvisor-pod", procVersionPath: linux }),
        (e: Error) =>
          e.name === "ConfigError" &&
          /SANDBOX_MODE=gvisor-pod/.test(e.message) &&
          /runtimeClassName: gvisor/.test(e.message) &&
          e.message.includes("6.1.0-28-amd64"),
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** Runs the probe (test/fixtures/gvisor-pod-probe.ts) with `prefix` before node, returns its JSON line. */
async function probe(prefix: string[]): Promise<Record<string, unknown>> {
  const argv = [
    ...prefix,
    process.execPath,
    "--no-node-snapshot",
    "--import",
    "tsx",
    "test/fixtures/gvisor-pod-probe.ts",
  ];
  const { stdout } = await run(argv[0]!, argv.slice(1), {
    cwd: PACKAGE,
    env: { PATH: "/nonexistent-gatehouse-test", HOME: tmpdir() },
    timeout: 240_000,
  });
  const line = stdout.trim().split("\n").pop() ?? "";
  return JSON.parse(line) as Record<string, unknown>;
}

test("a runner inside a real gVisor sandbox reports gvisor-pod and runs snippets without the insecure warning; the same runner outside gVisor refuses to claim it", {
  skip:
    RUNSC || REQUIRE_GVISOR ? false : "runsc not on PATH (set GATEHOUSE_REQUIRE_GVISOR=1 to fail instead)",
}, async () => {
  assert.ok(RUNSC, "runsc is required: install gVisor (npm run setup)");
  await buildIsolateHostOnce();
  const inside = await probe([RUNSC, "--network=none", "--ignore-cgroups", "do"]);
  assert.deepEqual(inside, { mode: "gvisor-pod", status: "gvisor-pod", warnings: [], returnJson: "42" });
  assert.equal(readKernel().gvisor, false, "this test must itself run outside gVisor");
  const outside = await probe([]);
  assert.match(String(outside.refused), /SANDBOX_MODE=gvisor-pod .*kernel is not gVisor's/);
});
