import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { RpcTarget } from "capnweb";
import { executeSnippet } from "../src/client.ts";
import { CGROUP_PARENT } from "../src/gvisor/cgroups.ts";
import type { SandboxDescription, SandboxRunnerHandle } from "../src/index.ts";
import { MemoryBinding, MODES, run, startTestRunner } from "./helpers.ts";

/** A binding whose `wait()` resolves only when the test calls `open()`; `entered` resolves on the first call. */
class Gate extends RpcTarget {
  private release: () => void = () => undefined;
  private readonly opened = new Promise<void>((resolve) => {
    this.release = resolve;
  });
  private enteredResolve: () => void = () => undefined;
  readonly entered = new Promise<void>((resolve) => {
    this.enteredResolve = resolve;
  });
  async wait(): Promise<string> {
    this.enteredResolve();
    await this.opened;
    return "opened";
  }
  open(): void {
    this.release();
  }
}

const GATED = `export default async (env: any) => await env.GATE.wait()`;

function sandboxOf(runner: SandboxRunnerHandle, workspaceId: string): SandboxDescription {
  const found = runner.pool.describe().filter((s) => s.workspaceId === workspaceId);
  assert.equal(found.length, 1, `workspace ${workspaceId} holds ${found.length} sandboxes`);
  return found[0]!;
}

function warmIds(runner: SandboxRunnerHandle): string[] {
  return runner.pool
    .describe()
    .filter((s) => s.state === "warm")
    .map((s) => s.id);
}

for (const mode of MODES) {
  describe(`sandbox pool (sandbox: ${mode})`, () => {
    let runner: SandboxRunnerHandle;
    before(async () => {
      runner = await startTestRunner(mode, { pool: { warm: 2 } });
      await runner.pool.whenWarm();
    });
    after(async () => {
      await runner.close();
    });

    test("a new workspace starts on a pre-started warm sandbox, and the pool refills", async () => {
      await runner.pool.whenWarm();
      const warm = warmIds(runner);
      assert.equal(warm.length, 2);
      const r = await run(runner, "export default () => 1", {}, {}, "ws-warm-start");
      assert.equal(r.ok, true, JSON.stringify(r.error));
      const mine = sandboxOf(runner, "ws-warm-start");
      assert.ok(warm.includes(mine.id), `${mine.id} was not one of the warm sandboxes ${warm.join(",")}`);
      assert.equal(mine.state, "leased");
      assert.equal(mine.executions, 1);
      await runner.pool.whenWarm();
      const refilled = warmIds(runner);
      assert.equal(refilled.length, 2);
      assert.ok(!refilled.includes(mine.id), "the leased sandbox went back to the warm set");
    });

    test("two workspaces never share a sandbox process, even when their executions interleave", async () => {
      const results = await Promise.all(
        ["ws-a", "ws-b", "ws-a", "ws-b", "ws-a", "ws-b"].map((ws) =>
          run(runner, "export default () => 2", {}, {}, ws),
        ),
      );
      for (const r of results) assert.equal(r.ok, true, JSON.stringify(r.error));
      const a = sandboxOf(runner, "ws-a");
      const b = sandboxOf(runner, "ws-b");
      assert.notEqual(a.id, b.id);
      assert.ok(a.pid !== null && b.pid !== null, "both sandboxes have a host pid");
      assert.notEqual(a.pid, b.pid);
      assert.equal(a.executions, 3);
      assert.equal(b.executions, 3);
      const pids = runner.pool
        .describe()
        .map((s) => s.pid)
        .filter((pid) => pid !== null);
      assert.equal(new Set(pids).size, pids.length, "two sandboxes report the same pid");
    });

    test("executions of one workspace run one at a time, in arrival order", async () => {
      const gate = new Gate();
      const first = run(runner, GATED, { GATE: { main: gate, methods: ["wait"] } }, {}, "ws-serial");
      await gate.entered;
      let secondDone = false;
      const second = run(runner, "export default () => 'second'", {}, {}, "ws-serial").then((r) => {
        secondDone = true;
        return r;
      });
      // An absence ("the second does not run meanwhile") has no event to wait on: a short grace.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(secondDone, false, "the second execution ran while the first was in flight");
      gate.open();
      assert.equal((await first).returnJson, '"opened"');
      assert.equal((await second).returnJson, '"second"');
      assert.equal(sandboxOf(runner, "ws-serial").executions, 2);
    });

    test("nothing an execution leaves on globals or prototypes is visible to the next one of the same workspace", async () => {
      const dirty = await run(
        runner,
        `export default async () => {
          (globalThis as any).leaked = "secret";
          (Object.prototype as any).polluted = true;
          Array.prototype.map = function () { return ["hijacked"]; };
          JSON.stringify = () => "forged";
          (globalThis as any).console = { log() {} };
          return "dirty";
        }`,
        {},
        {},
        "ws-leftovers",
      );
      assert.equal(dirty.ok, true, JSON.stringify(dirty.error));
      const before = sandboxOf(runner, "ws-leftovers");
      const clean = await run(
        runner,
        `export default async () => {
          console.log("still logging");
          return { leaked: typeof (globalThis as any).leaked, polluted: ({} as any).polluted === true,
                   map: [1, 2].map((x) => x * 2), json: JSON.stringify({ a: 1 }) };
        }`,
        {},
        {},
        "ws-leftovers",
      );
      assert.equal(clean.ok, true, JSON.stringify(clean.error));
      assert.deepEqual(JSON.parse(clean.returnJson), {
        leaked: "undefined",
        polluted: false,
        map: [2, 4],
        json: '{"a":1}',
      });
      assert.deepEqual(clean.console, [{ level: "log", text: "still logging" }]);
      const after = sandboxOf(runner, "ws-leftovers");
      assert.equal(after.id, before.id, "both executions ran in the same sandbox");
      assert.equal(after.executions, 2);
    });

    test("a runaway isolate (wall time, heap) is disposed without killing its sandbox", async () => {
      const ws = "ws-runaway";
      assert.equal((await run(runner, "export default () => 0", {}, {}, ws)).ok, true);
      const first = sandboxOf(runner, ws);
      const loop = await run(
        runner,
        "export default async () => { for (;;) {} }",
        {},
        { wallTimeMs: 300 },
        ws,
      );
      assert.equal(loop.error?.name, "TimeoutError");
      const heap = await run(
        runner,
        "export default async () => { const a = []; for (;;) a.push(new Array(100000).fill(1)); }",
        {},
        { heapMb: 32 },
        ws,
      );
      assert.equal(heap.error?.name, "HeapLimitError", JSON.stringify(heap.error));
      const next = await run(runner, "export default () => 'alive'", {}, {}, ws);
      assert.equal(next.returnJson, '"alive"');
      const same = sandboxOf(runner, ws);
      assert.equal(same.id, first.id);
      assert.equal(same.pid, first.pid);
      assert.equal(same.executions, 4);
    });

    test("a crashed sandbox (kill -9) fails only the execution in flight; the workspace's next execution gets a new sandbox", async () => {
      const victimGate = new Gate();
      const bystanderGate = new Gate();
      const victim = run(runner, GATED, { GATE: { main: victimGate, methods: ["wait"] } }, {}, "ws-victim");
      const bystander = run(
        runner,
        GATED,
        { GATE: { main: bystanderGate, methods: ["wait"] } },
        {},
        "ws-bystander",
      );
      await Promise.all([victimGate.entered, bystanderGate.entered]);
      // Queued behind the execution that will crash: it must run, on a new sandbox.
      const queued = run(runner, "export default () => 'queued ran'", {}, {}, "ws-victim");
      const crashed = sandboxOf(runner, "ws-victim");
      assert.ok(crashed.pid, "the sandbox has a host pid");
      process.kill(crashed.pid, "SIGKILL");

      const r = await victim;
      assert.equal(r.ok, false);
      assert.equal(r.error?.name, "SandboxCrashError");
      assert.match(
        r.error?.message ?? "",
        /the sandbox crashed \(signal SIGKILL\); the next execution gets a new sandbox/,
      );
      assert.equal((await queued).returnJson, '"queued ran"');
      const replacement = sandboxOf(runner, "ws-victim");
      assert.notEqual(replacement.id, crashed.id);
      assert.notEqual(replacement.pid, crashed.pid);
      assert.equal(replacement.executions, 1);

      bystanderGate.open();
      const other = await bystander;
      assert.equal(other.ok, true, JSON.stringify(other.error));
      assert.equal(other.returnJson, '"opened"');
      const metrics = await runner.metrics.registry.metrics();
      assert.match(metrics, /gatehouse_sandbox_kills_total\{reason="crash"\} [1-9]/);
      assert.match(metrics, /gatehouse_sandbox_pool_events_total\{event="crashed"\} [1-9]/);
    });

    test("pool gauges report the warm, leased and starting sandboxes", async () => {
      await runner.pool.whenWarm();
      const text = await runner.metrics.registry.metrics();
      const gauge = (state: string) =>
        Number(new RegExp(`gatehouse_sandbox_pool_sandboxes\\{state="${state}"\\} (\\d+)`).exec(text)?.[1]);
      const described = runner.pool.describe();
      assert.equal(gauge("warm"), described.filter((s) => s.state === "warm").length);
      assert.equal(gauge("leased"), described.filter((s) => s.state === "leased").length);
      assert.ok(gauge("leased") >= 1);
      assert.match(text, new RegExp(`gatehouse_sandbox_pool_size ${described.length}`));
      assert.match(text, /gatehouse_sandbox_start_seconds_count [1-9]/);
    });
  });

  describe(`sandbox pool at its cap (sandbox: ${mode})`, () => {
    let runner: SandboxRunnerHandle;
    before(async () => {
      runner = await startTestRunner(mode, { pool: { warm: 2, maxSandboxes: 2 } });
      await runner.pool.whenWarm();
    });
    after(async () => {
      await runner.close();
    });

    test("a new workspace at the cap evicts exactly one idle workspace (the least recently used) and runs", async () => {
      assert.equal((await run(runner, "export default () => 1", {}, {}, "ws-a")).ok, true);
      assert.equal((await run(runner, "export default () => 2", {}, {}, "ws-b")).ok, true);
      const b = sandboxOf(runner, "ws-b");
      const r = await run(runner, "export default () => 3", {}, {}, "ws-c");
      assert.equal(r.ok, true, JSON.stringify(r.error));
      const all = runner.pool.describe();
      assert.ok(!all.some((s) => s.workspaceId === "ws-a"), "ws-a (least recently used) was evicted");
      assert.equal(sandboxOf(runner, "ws-b").id, b.id, "ws-b kept its sandbox");
      assert.ok(all.length <= 2);
    });

    test("when every sandbox is busy a new workspace is refused, and nobody is evicted", async () => {
      const gates = [new Gate(), new Gate()];
      const running = ["ws-busy-1", "ws-busy-2"].map((ws, i) =>
        run(runner, GATED, { GATE: { main: gates[i]!, methods: ["wait"] } }, {}, ws),
      );
      await Promise.all(gates.map((g) => g.entered));
      const refused = await run(runner, "export default () => 4", {}, {}, "ws-late").catch((e: Error) => e);
      assert.match(String((refused as Error).message ?? JSON.stringify(refused)), /all 2 sandboxes are busy/);
      for (const g of gates) g.open();
      for (const r of await Promise.all(running)) assert.equal(r.ok, true);
      assert.equal(runner.pool.describe().filter((s) => s.workspaceId?.startsWith("ws-busy")).length, 2);
    });
  });

  describe(`sandbox pool reaping and limits (sandbox: ${mode})`, () => {
    let runner: SandboxRunnerHandle;
    before(async () => {
      runner = await startTestRunner(mode, {
        pool: { warm: 1, idleMs: 1_500 },
        maxCalls: 5,
        maxFrameBytes: 4096,
        graceMs: 1_500,
      });
      await runner.pool.whenWarm();
    });
    after(async () => {
      await runner.close();
    });

    test("an idle sandbox is reaped and replaced by a warm one; the workspace then starts on a new sandbox", async () => {
      assert.equal((await run(runner, "export default () => 1", {}, {}, "ws-idle")).ok, true);
      const leased = sandboxOf(runner, "ws-idle");
      await runner.pool.waitFor(
        (all) =>
          !all.some((s) => s.workspaceId === "ws-idle") && all.filter((s) => s.state === "warm").length === 1,
        120_000,
      );
      const warm = warmIds(runner);
      assert.ok(!warm.includes(leased.id), "the reaped sandbox came back as a warm one");
      assert.equal((await run(runner, "export default () => 2", {}, {}, "ws-idle")).ok, true);
      const renewed = sandboxOf(runner, "ws-idle");
      assert.notEqual(renewed.id, leased.id);
      assert.ok(warm.includes(renewed.id), "the workspace did not get the warm sandbox");
      const metrics = await runner.metrics.registry.metrics();
      assert.match(metrics, /gatehouse_sandbox_pool_events_total\{event="reaped"\} [1-9]/);
    });

    test("the call cap ends an execution with CallLimitError after exactly that many calls; the sandbox lives on", async () => {
      const memory = new MemoryBinding();
      const r = await run(
        runner,
        `export default async (env: any) => { for (let i = 0; i < 20; i++) await env.MEMORY.add(i, 1); return "done"; }`,
        { MEMORY: { main: memory, methods: ["add"] } },
        {},
        "ws-calls",
      );
      assert.equal(r.ok, false);
      assert.equal(r.error?.name, "CallLimitError");
      assert.match(r.error?.message ?? "", /more than 5 binding calls/);
      assert.equal(memory.calls.length, 5, `the binding saw ${memory.calls.length} calls`);
      const sandbox = sandboxOf(runner, "ws-calls");
      const next = await run(
        runner,
        `export default async (env: any) => env.MEMORY.add(1, 2)`,
        { MEMORY: { main: memory, methods: ["add"] } },
        {},
        "ws-calls",
      );
      assert.equal(next.returnJson, "3", "the call budget is per execution");
      assert.equal(sandboxOf(runner, "ws-calls").id, sandbox.id);
      assert.match(
        await runner.metrics.registry.metrics(),
        /gatehouse_sandbox_kills_total\{reason="calls"\} 1/,
      );
    });

    test("a capnweb message above the frame cap ends the execution with MessageSizeError in either direction", async () => {
      const memory = new MemoryBinding();
      const out = await run(
        runner,
        `export default async (env: any) => env.MEMORY.echo("x".repeat(10000))`,
        { MEMORY: { main: memory, methods: ["echo"] } },
        {},
        "ws-frames",
      );
      assert.equal(out.ok, false);
      assert.equal(out.error?.name, "MessageSizeError");
      assert.match(out.error?.message ?? "", /above the cap of 4096 bytes/);
      assert.deepEqual(memory.calls, [], "the oversized call reached the binding");

      const big = new (class extends RpcTarget {
        blob(): string {
          return "y".repeat(10_000);
        }
      })();
      const back = await run(
        runner,
        `export default async (env: any) => (await env.BIG.blob()).length`,
        { BIG: { main: big, methods: ["blob"] } },
        {},
        "ws-frames",
      );
      assert.equal(back.ok, false);
      assert.equal(back.error?.name, "MessageSizeError");
      assert.match(back.error?.message ?? "", /reply from binding BIG/);
      const ok = await run(runner, "export default () => 'fine'", {}, {}, "ws-frames");
      assert.equal(ok.returnJson, '"fine"');
      assert.equal(sandboxOf(runner, "ws-frames").executions, 3, "the same sandbox served all three");
      assert.match(
        await runner.metrics.registry.metrics(),
        /gatehouse_sandbox_kills_total\{reason="message-size"\} 2/,
      );
    });

    test("a sandbox that stops answering is killed at the deadline and replaced", async () => {
      const gate = new Gate();
      const pending = run(
        runner,
        GATED,
        { GATE: { main: gate, methods: ["wait"] } },
        { wallTimeMs: 500 },
        "ws-frozen",
      );
      await gate.entered;
      const frozen = sandboxOf(runner, "ws-frozen");
      process.kill(frozen.pid!, "SIGSTOP");
      try {
        const r = await pending;
        assert.equal(r.error?.name, "TimeoutError");
        assert.match(
          r.error?.message ?? "",
          /its sandbox was killed and the next execution gets a new sandbox/,
        );
      } finally {
        try {
          process.kill(frozen.pid!, "SIGCONT");
        } catch {
          // already gone
        }
      }
      const next = await run(runner, "export default () => 'new'", {}, {}, "ws-frozen");
      assert.equal(next.returnJson, '"new"');
      assert.notEqual(sandboxOf(runner, "ws-frozen").id, frozen.id);
    });
  });
}

describe("cgroup limits (gVisor)", { skip: MODES.includes("gvisor") ? false : "runsc not on PATH" }, () => {
  test("each sandbox gets its own memory and pids cgroup where cgroups are delegated, and says so when not", async () => {
    const runner = await startTestRunner("gvisor", {
      pool: { warm: 1 },
      cgroups: { memoryMb: 768, pidsMax: 400 },
    });
    try {
      await runner.pool.whenWarm();
      const status = runner.status();
      if (!status.cgroups) {
        // Not delegated here: nothing is claimed.
        assert.equal(status.cgroups, null);
        return;
      }
      assert.deepEqual(status.cgroups, { memoryMb: 768, pidsMax: 400 });
      const sandbox = status.sandboxes.find((s) => s.state === "warm")!;
      const own = (controller: string) =>
        readFileSync("/proc/self/cgroup", "utf8")
          .split("\n")
          .map((l) => l.split(":"))
          .find((p) => p[1]?.split(",").includes(controller))?.[2];
      const memoryDir = join(
        "/sys/fs/cgroup/memory",
        own("memory") ?? "/",
        CGROUP_PARENT,
        sandbox.instanceId!,
      );
      const pidsDir = join("/sys/fs/cgroup/pids", own("pids") ?? "/", CGROUP_PARENT, sandbox.instanceId!);
      if (existsSync(memoryDir)) {
        assert.equal(
          readFileSync(join(memoryDir, "memory.limit_in_bytes"), "utf8").trim(),
          String(768 * 1024 * 1024),
        );
        assert.equal(readFileSync(join(pidsDir, "pids.max"), "utf8").trim(), "400");
      } else {
        assert.fail(`cgroups reported on but ${memoryDir} does not exist`);
      }
    } finally {
      await runner.close();
    }
  });
});

test("an empty workspace id is refused naming start.workspace_id", async () => {
  const runner = await startTestRunner("none", { pool: { warm: 0 } });
  try {
    await assert.rejects(
      executeSnippet(`127.0.0.1:${runner.port}`, {
        executionId: "no-ws",
        workspaceId: "",
        code: "export default () => 1",
      }),
      (e: { code: number; details: string }) => e.code === 3 && /start\.workspace_id/.test(e.details),
    );
  } finally {
    await runner.close();
  }
});

test("executions are labelled start=cold when their sandbox had to start, start=warm when it was ready", async () => {
  const runner = await startTestRunner("none", { pool: { warm: 0 } });
  /** Executions counted in gatehouse_sandbox_execution_seconds with start=`start`. */
  const counted = async (start: string) =>
    (await runner.metrics.executionSeconds.get()).values
      .filter((v) => v.metricName === "gatehouse_sandbox_execution_seconds_count" && v.labels.start === start)
      .reduce((n, v) => n + v.value, 0);
  try {
    // No pre-started sandbox: the workspace's first execution waits for one to start.
    assert.equal((await run(runner, "export default () => 1", {}, {}, "ws-cold")).ok, true);
    assert.equal(await counted("cold"), 1);
    assert.equal(await counted("warm"), 0);
    // Its next executions run on the sandbox it holds, ready.
    assert.equal((await run(runner, "export default () => 2", {}, {}, "ws-cold")).ok, true);
    assert.equal((await run(runner, "export default () => 3", {}, {}, "ws-cold")).ok, true);
    assert.equal(await counted("warm"), 2);
    assert.equal(await counted("cold"), 1);
  } finally {
    await runner.close();
  }
});
