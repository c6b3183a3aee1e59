/**
 * Escape suite, processes. Proves that agent code cannot start programs, signal host processes or look at
 * the host's processes:
 * - isolate layer: no child_process, process, Worker, timers or V8 intrinsics; each attempt fails with the
 *   asserted ReferenceError / ImportError / SyntaxError;
 * - container wall: inside the runner's gVisor container there is no shell, signals to host pids (the test
 *   process, its parent, kill(-1)) fail with ESRCH and leave the host processes alive, /proc shows only the
 *   container's own processes, the process is uid/gid 65534 and cannot become root, kernel tunables and
 *   sysrq are out of reach, and system calls are answered by gVisor's kernel, not the host's.
 */
import assert from "node:assert/strict";
import { release } from "node:os";
import { after, before, describe, test } from "node:test";
import type { SandboxRunnerHandle } from "../../src/index.ts";
import {
  alive,
  assertFailed,
  assertRefused,
  CONTAINER_SKIP,
  ESCAPE_MODE,
  exec,
  probe,
  probeTemplate,
  removeBundleTemplate,
  startEscapeRunner,
  succeeded,
} from "./harness.ts";

describe(`process escapes, isolate layer (runner sandbox: ${ESCAPE_MODE})`, () => {
  let runner: SandboxRunnerHandle;
  before(async () => {
    runner = await startEscapeRunner();
  });
  after(async () => {
    await runner.close();
  });

  test("require('child_process').spawn('/bin/sh'): ReferenceError", async () => {
    const r = await exec(
      runner,
      `export default async () => require("child_process").spawn("/bin/sh", ["-c", "id"])`,
    );
    assertFailed(r, "ReferenceError", /^require is not defined$/);
  });

  test("a static import of node:child_process: ImportError", async () => {
    const r = await exec(
      runner,
      `import { execSync } from "node:child_process";\nexport default async () => execSync("id").toString()`,
    );
    assertFailed(r, "ImportError", /found "node:child_process"/);
  });

  test("process.kill of the runner's pid: ReferenceError", async () => {
    const r = await exec(runner, `export default async () => process.kill(${process.pid}, "SIGKILL")`);
    assertFailed(r, "ReferenceError", /^process is not defined$/);
    assert.ok(alive(process.pid));
  });

  test("a Worker thread to run code outside the isolate: ReferenceError", async () => {
    const r = await exec(
      runner,
      `export default async () => new Worker("data:text/javascript,postMessage(1)", { type: "module" })`,
    );
    assertFailed(r, "ReferenceError", /^Worker is not defined$/);
  });

  test("a timer to keep code running after the execution: ReferenceError", async () => {
    const r = await exec(runner, `export default async () => { setInterval(() => {}, 1); }`);
    assertFailed(r, "ReferenceError", /^setInterval is not defined$/);
  });

  test("V8 natives syntax (%DebugPrint, %SystemBreak) is not enabled: SyntaxError", async () => {
    const r = await exec(runner, `export default async () => {\n  eval("%SystemBreak()");\n}`);
    assertFailed(r, "SyntaxError", /Unexpected token '%'/);
  });
});

describe("process escapes, container wall (node inside the runner's gVisor container)", {
  skip: CONTAINER_SKIP,
}, () => {
  let template: Awaited<ReturnType<typeof probeTemplate>>;
  before(async () => {
    template = await probeTemplate();
  });
  after(async () => {
    await removeBundleTemplate(template);
  });

  test("spawning a shell: ENOENT (the root has no shell or tools)", async () => {
    const seen = await probe(
      template,
      `const cp = require("child_process");
       await attempt("sh", () => cp.execFileSync("/bin/sh", ["-c", "id"]).toString());
       await attempt("bash", () => cp.execFileSync("/usr/bin/bash", ["-c", "id"]).toString());
       await attempt("busybox", () => cp.execFileSync("/bin/busybox", ["id"]).toString());`,
    );
    assertRefused(seen.sh, ["ENOENT"]);
    assertRefused(seen.bash, ["ENOENT"]);
    assertRefused(seen.busybox, ["ENOENT"]);
  });

  test("SIGKILL to the host's test process and its parent: ESRCH, both stay alive", async () => {
    const seen = await probe(
      template,
      `await attempt("self", () => process.kill(${process.pid}, "SIGKILL"));
       await attempt("parent", () => process.kill(${process.ppid}, "SIGKILL"));`,
    );
    assertRefused(seen.self, ["ESRCH"]);
    assertRefused(seen.parent, ["ESRCH"]);
    assert.ok(alive(process.pid) && alive(process.ppid));
  });

  test("kill(-1, SIGKILL) (every process the uid may signal): ESRCH, the host is untouched", async () => {
    const seen = await probe(template, `await attempt("all", () => process.kill(-1, "SIGKILL"));`);
    assertRefused(seen.all, ["ESRCH"]);
    assert.ok(alive(process.pid) && alive(process.ppid));
  });

  test("/proc shows only the container's own processes; the host's pids are ENOENT", async () => {
    const seen = await probe(
      template,
      `const fs = require("fs");
       await attempt("pids", () => fs.readdirSync("/proc").filter((e) => /^\\d+$/.test(e)));
       await attempt("hostEnviron", () => fs.readFileSync("/proc/${process.pid}/environ", "utf8"));
       await attempt("hostCmdline", () => fs.readFileSync("/proc/${process.ppid}/cmdline", "utf8"));
       await attempt("init", () => fs.readFileSync("/proc/1/cmdline", "utf8").split("\\0"));`,
    );
    assert.deepEqual(seen.pids?.value, ["1"], "only the probe itself (pid 1 of its own namespace)");
    assertRefused(seen.hostEnviron, ["ENOENT"]);
    assertRefused(seen.hostCmdline, ["ENOENT"]);
    const init = succeeded<string[]>(seen.init);
    assert.equal(init[0], template.nodePath, "pid 1 is the probe's node, not the host's init");
  });

  test("the process is uid/gid 65534 and cannot become root (setuid/setgid/setgroups: EPERM)", async () => {
    const seen = await probe(
      template,
      `await attempt("ids", () => [process.getuid(), process.getgid(), process.geteuid(), process.getegid()]);
       await attempt("setuid", () => process.setuid(0));
       await attempt("setgid", () => process.setgid(0));
       await attempt("setgroups", () => process.setgroups([0]));`,
    );
    assert.deepEqual(seen.ids?.value, [65534, 65534, 65534, 65534]);
    assertRefused(seen.setuid, ["EPERM"]);
    assertRefused(seen.setgid, ["EPERM"]);
    assertRefused(seen.setgroups, ["EPERM"]);
  });

  test("kernel tunables (core_pattern) and sysrq-trigger are out of reach", async () => {
    const seen = await probe(
      template,
      `const fs = require("fs");
       await attempt("corePattern", () => fs.writeFileSync("/proc/sys/kernel/core_pattern", "|/tmp/x"));
       await attempt("sysrq", () => fs.writeFileSync("/proc/sysrq-trigger", "b"));
       await attempt("modprobe", () => fs.writeFileSync("/proc/sys/kernel/modprobe", "/tmp/x"));`,
    );
    assertRefused(seen.corePattern, ["ENOENT", "EROFS", "EACCES", "EPERM"]);
    assertRefused(seen.sysrq, ["ENOENT", "EROFS", "EACCES", "EPERM"]);
    assertRefused(seen.modprobe, ["ENOENT", "EROFS", "EACCES", "EPERM"]);
  });

  test("system calls are answered by gVisor's kernel, not the host kernel", async () => {
    const seen = await probe(
      template,
      `await attempt("release", () => require("os").release());
       await attempt("hostname", () => require("os").hostname());`,
    );
    assert.notEqual(seen.release?.value, release(), "uname inside equals the host kernel's");
    assert.equal(seen.hostname?.value, "sandbox");
  });
});
