/**
 * Escape suite, resource bombs. Proves that a snippet cannot hold the runner's CPU, memory, output or
 * frame relay beyond its limits, and that each bomb ends with the reason the caller is told:
 * TimeoutError (sync loop, microtask loop, never-settling promise, Atomics.wait, regex backtracking,
 * poisoned getters), HeapLimitError (allocation, string doubling, promise-chain growth), RangeError
 * (recursion, string length), output truncation with a marker, capped error and result sizes, a capnweb
 * message too large to be relayed to the binding, a per-runner concurrency cap; and the runner keeps
 * serving afterwards. Every wall-time limit here is short and every test is bounded.
 *
 * Two attempts are kept strict and marked TODO because they do NOT fail for the stated reason today
 * (findings, see the test comments): a 2 MiB return value and a flood of unawaited binding calls.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitUntil } from "@gatehouse/service-kit";
import type { ServiceError } from "@grpc/grpc-js";
import type { SandboxRunnerHandle } from "../../src/index.ts";
import {
  assertFailed,
  ESCAPE_MODE,
  exec,
  returned,
  startEscapeRunner,
  VAULT_METHODS,
  Vault,
} from "./harness.ts";

const WALL_MS = 1000;
/** Sandbox start-up and teardown on top of the wall-time limit (gVisor start is ~0.5 s idle, more under load). */
const SLACK_MS = 8000;
const TIMEOUT_MESSAGE = new RegExp(`wall-time limit of ${WALL_MS} ms \\(limits\\.wall_time_ms\\)`);
/** Heap bombs get a long wall time, so the heap limit (not the clock) is what must stop them. */
const HEAP_LIMITS = { wallTimeMs: 10_000, heapMb: 32 };
/** Limits for bombs whose expected reason is not the clock: room enough that load never turns them into timeouts. */
const ROOMY = { wallTimeMs: 10_000, heapMb: 64 };
const HEAP_MESSAGE = /heap limit of 32 MiB \(limits\.heap_mb\)/;

describe(`resource bombs (runner sandbox: ${ESCAPE_MODE})`, () => {
  let runner: SandboxRunnerHandle;
  before(async () => {
    runner = await startEscapeRunner();
  });
  after(async () => {
    await runner.close();
  });

  /** Runs `code` (default: 1 s wall time, 64 MiB heap) and asserts the whole call stayed bounded. */
  async function bomb(code: string, bindings = {}, limits = { wallTimeMs: WALL_MS, heapMb: 64 }) {
    const began = Date.now();
    const r = await exec(runner, code, { bindings, limits });
    const took = Date.now() - began;
    assert.ok(
      took < limits.wallTimeMs + SLACK_MS,
      `the execution took ${took} ms with a ${limits.wallTimeMs} ms limit`,
    );
    return r;
  }

  test("a synchronous infinite loop: TimeoutError at the wall-time limit", async () => {
    assertFailed(await bomb(`export default async () => { for (;;) {} }`), "TimeoutError", TIMEOUT_MESSAGE);
  });

  test("an async loop that only awaits (microtask starvation): TimeoutError", async () => {
    assertFailed(
      await bomb(`export default async () => { for (;;) await null; }`),
      "TimeoutError",
      TIMEOUT_MESSAGE,
    );
  });

  test("a promise that never settles: TimeoutError", async () => {
    assertFailed(
      await bomb(`export default async () => { await new Promise(() => {}); }`),
      "TimeoutError",
      TIMEOUT_MESSAGE,
    );
  });

  test("Atomics.wait with no timeout (a blocking sleep): TimeoutError", async () => {
    assertFailed(
      await bomb(`export default async () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)`),
      "TimeoutError",
      TIMEOUT_MESSAGE,
    );
  });

  test("catastrophic regular-expression backtracking: TimeoutError", async () => {
    assertFailed(
      await bomb(`export default async () => /^(a+)+$/.test("a".repeat(40) + "!")`),
      "TimeoutError",
      TIMEOUT_MESSAGE,
    );
  });

  test("a thrown object whose name getter never returns (poisoning the harness): TimeoutError", async () => {
    assertFailed(
      await bomb(`export default async () => { throw { get name() { for (;;) {} }, message: "m" }; }`),
      "TimeoutError",
      TIMEOUT_MESSAGE,
    );
  });

  test("console.log of a value whose toJSON never returns: TimeoutError", async () => {
    assertFailed(
      await bomb(`export default async () => { console.log({ toJSON() { for (;;) {} } }); }`),
      "TimeoutError",
      TIMEOUT_MESSAGE,
    );
  });

  test("unbounded recursion: RangeError (stack), the runner is unaffected", async () => {
    assertFailed(
      await bomb(
        `export default async () => { const f = (n: number): number => f(n + 1) + 1; return f(0); }`,
        {},
        ROOMY,
      ),
      "RangeError",
      /^Maximum call stack size exceeded$/,
    );
  });

  test("a string of 2^30 characters: RangeError (Invalid string length)", async () => {
    assertFailed(
      await bomb(`export default async () => "x".repeat(2 ** 30).length`, {}, ROOMY),
      "RangeError",
      /^Invalid string length$/,
    );
  });

  test("doubling strings and keeping every copy: HeapLimitError", async () => {
    assertFailed(
      await bomb(
        `export default async () => { let s = "x"; const keep: string[] = []; for (let i = 0; i < 40; i++) { s = s + s; keep.push(s.slice(1)); } return keep.length; }`,
        {},
        HEAP_LIMITS,
      ),
      "HeapLimitError",
      HEAP_MESSAGE,
    );
  });

  test("a 2 GiB ArrayBuffer: HeapLimitError", async () => {
    assertFailed(
      await bomb(`export default async () => new Uint8Array(2 * 1024 * 1024 * 1024).length`, {}, HEAP_LIMITS),
      "HeapLimitError",
      HEAP_MESSAGE,
    );
  });

  test("growing arrays without bound: HeapLimitError", async () => {
    assertFailed(
      await bomb(
        `export default async () => { const keep = []; for (;;) keep.push(new Array(100000).fill(keep.length)); }`,
        {},
        HEAP_LIMITS,
      ),
      "HeapLimitError",
      HEAP_MESSAGE,
    );
  });

  test("an async loop that keeps a new promise per turn (growing queue): HeapLimitError", async () => {
    const began = Date.now();
    const r = await exec(
      runner,
      `export default async () => {
        const keep: Promise<unknown>[] = [];
        const turn = (): void => { keep.push(new Promise(() => {})); Promise.resolve().then(turn); };
        turn();
        await new Promise(() => {});
      }`,
      { limits: { wallTimeMs: 10_000, heapMb: 16 } },
    );
    assertFailed(r, "HeapLimitError", /heap limit of 16 MiB \(limits\.heap_mb\)/);
    assert.ok(Date.now() - began < 10_000 + SLACK_MS);
  });

  test("an output flood of 100,000 lines is cut at the cap with a marker", async () => {
    const r = await exec(
      runner,
      `export default async () => { for (let i = 0; i < 100000; i++) console.log("flood " + i + " " + "x".repeat(80)); return "done"; }`,
      { limits: { outputBytes: 4096, wallTimeMs: 10_000 } },
    );
    assert.equal(returned<string>(r), "done");
    assert.equal(r.outputTruncated, true);
    const kept = r.console.slice(0, -1).reduce((n, l) => n + Buffer.byteLength(l.text), 0);
    assert.ok(kept <= 4096, `kept ${kept} bytes`);
    assert.match(r.console.at(-1)?.text ?? "", /console output truncated: limit of 4096 bytes reached/);
  });

  test("a single 10 MiB console line is cut at the cap with a marker", async () => {
    const r = await exec(
      runner,
      `export default async () => { console.error("y".repeat(10 * 1024 * 1024)); return "done"; }`,
      { limits: { outputBytes: 4096, wallTimeMs: 10_000 } },
    );
    assert.equal(returned<string>(r), "done");
    assert.equal(r.outputTruncated, true);
    assert.ok(r.console.reduce((n, l) => n + l.text.length, 0) < 4096 + 200);
    assert.match(r.console.at(-1)?.text ?? "", /truncated/);
  });

  test("a 1 MiB error message is cut to 16 KiB in the result", async () => {
    const r = await exec(
      runner,
      `export default async () => { throw new TypeError("m".repeat(1024 * 1024)); }`,
    );
    const error = assertFailed(r, "TypeError", /^m+$/);
    assert.ok(error.message.length <= 16_384, `message of ${error.message.length} characters`);
    assert.ok(error.stack.length <= 16_384, `stack of ${error.stack.length} characters`);
  });

  test("a 200,000-deep nested return value: ResultNotSerializableError", async () => {
    assertFailed(
      await bomb(
        `export default async () => { let v: unknown = []; for (let i = 0; i < 200000; i++) v = [v]; return v; }`,
        {},
        ROOMY,
      ),
      "ResultNotSerializableError",
      /not JSON-serializable \(Maximum call stack size exceeded\)/,
    );
  });

  // Was a finding with one process per execution: the result line was lost behind pending stdout writes
  // (SandboxCrashError instead of ResultTooLargeError). The long-lived isolate host no longer exits after
  // a result; this guards against a regression.
  test("a 2 MiB return value: ResultTooLargeError", async () => {
    const r = await exec(runner, `export default async () => "z".repeat(2 * 1024 * 1024)`);
    assertFailed(r, "ResultTooLargeError", /larger than 1048576 bytes of JSON/);
  });

  test("a 5 MiB capnweb message never reaches the binding", async () => {
    const vault = new Vault();
    let outcome: { result?: Awaited<ReturnType<typeof exec>>; error?: ServiceError };
    try {
      outcome = {
        result: await exec(
          runner,
          `export default async (env: any) => (await env.VAULT.echo("x".repeat(5 * 1024 * 1024))).length`,
          { bindings: { VAULT: { main: vault, methods: VAULT_METHODS } } },
        ),
      };
    } catch (error) {
      outcome = { error: error as ServiceError };
    }
    assert.deepEqual(vault.calls, [], "the binding received the oversized call");
    if (outcome.result) {
      // The runner's own cap on capnweb message size (issue 5 item 2).
      assertFailed(outcome.result, "MessageSizeError", /above the cap/);
    } else {
      // No runner cap yet: the frame dies at the kernel side's gRPC receive limit (4 MiB).
      assert.equal(outcome.error?.code, 8, `gRPC status ${outcome.error?.code}: ${outcome.error?.details}`);
      assert.match(outcome.error?.details ?? "", /Received message larger than max \(\d+ vs 4194304\)/);
    }
  });

  // Was a finding before the per-execution call cap: 20,000 unawaited calls crashed the isolate host
  // (SIGSEGV with 200,000). Now the cap (SANDBOX_MAX_CALLS) or the wall-time limit stops it.
  test("a flood of 20,000 unawaited binding calls stops with CallLimitError or TimeoutError", async () => {
    const vault = new Vault();
    const r = await bomb(
      `export default async (env: any) => { const calls = []; for (let i = 0; i < 20000; i++) calls.push(env.VAULT.add(i, 1)); await Promise.all(calls); return calls.length; }`,
      { VAULT: { main: vault, methods: VAULT_METHODS } },
    );
    assert.equal(r.ok, false, "the flood completed");
    assert.ok(
      ["CallLimitError", "TimeoutError"].includes(r.error?.name ?? ""),
      `${r.error?.name}: ${r.error?.message}`,
    );
  });

  test("more executions at once than the runner admits: the extra one waits for a slot, then runs", async () => {
    const small = await startEscapeRunner({ maxConcurrent: 2 });
    try {
      const loop = `export default async () => { for (;;) {} }`;
      const limits = { wallTimeMs: 3000 };
      const ended: string[] = [];
      const first = ["ws-a", "ws-b"].map((workspaceId) =>
        exec(small, loop, { limits, workspaceId }).finally(() => ended.push(workspaceId)),
      );
      // The third is sent once the runner holds both (its active-executions gauge), not after a guess.
      await waitUntil(
        "the runner to hold two executions",
        async () => (await small.metrics.active.get()).values[0]?.value === 2,
      );
      const third = exec(small, `export default async () => 6 * 7`, { workspaceId: "ws-c" }).finally(() =>
        ended.push("ws-c"),
      );
      await waitUntil(
        "the third execution to wait for a slot",
        async () => (await small.metrics.waiting.get()).values[0]?.value === 1,
      );
      const [a, b, c] = await Promise.all([...first, third]);
      assert.equal(a?.error?.name, "TimeoutError");
      assert.equal(b?.error?.name, "TimeoutError");
      assert.equal(returned<number>(c!), 42);
      assert.notEqual(
        ended[0],
        "ws-c",
        `the waiting execution ran only after a slot freed: ${ended.join(", ")}`,
      );
      assert.equal((await small.metrics.waiting.get()).values[0]?.value, 0);
    } finally {
      await small.close();
    }
  });

  test("a runner that stays full: RESOURCE_EXHAUSTED naming SANDBOX_MAX_WAITING at once, SANDBOX_ADMISSION_WAIT_MS after the wait", async () => {
    const small = await startEscapeRunner({ maxConcurrent: 2, maxWaiting: 1, admissionWaitMs: 300 });
    try {
      const loop = `export default async () => { for (;;) {} }`;
      const limits = { wallTimeMs: 4000 };
      const first = ["ws-a", "ws-b"].map((workspaceId) => exec(small, loop, { limits, workspaceId }));
      await waitUntil(
        "the runner to hold two executions",
        async () => (await small.metrics.active.get()).values[0]?.value === 2,
      );
      const waiting = exec(small, `export default async () => 1`, { workspaceId: "ws-c" });
      await waitUntil(
        "one execution to wait for a slot",
        async () => (await small.metrics.waiting.get()).values[0]?.value === 1,
      );
      const refusedAtOnce = await exec(small, `export default async () => 2`, { workspaceId: "ws-d" }).then(
        () => assert.fail("a fourth execution was admitted past SANDBOX_MAX_WAITING"),
        (err: ServiceError) => err,
      );
      assert.equal(refusedAtOnce.code, 8, `gRPC status ${refusedAtOnce.code}`);
      assert.match(
        refusedAtOnce.details,
        /2 executions admitted \(SANDBOX_MAX_CONCURRENT\) and 1 waiting \(SANDBOX_MAX_WAITING\)/,
      );
      const refusedLater = await waiting.then(
        () => assert.fail("the waiting execution ran although no slot freed within the wait"),
        (err: ServiceError) => err,
      );
      assert.equal(refusedLater.code, 8, `gRPC status ${refusedLater.code}`);
      assert.match(refusedLater.details, /within 300 ms \(SANDBOX_ADMISSION_WAIT_MS\)/);
      await Promise.all(first);
    } finally {
      await small.close();
    }
  });

  test("the runner still answers a trivial execution promptly (also right after the bombs above)", async () => {
    const began = Date.now();
    const r = await exec(runner, `export default async () => 6 * 7`);
    assert.equal(returned<number>(r), 42);
    assert.ok(Date.now() - began < SLACK_MS, `took ${Date.now() - began} ms`);
  });
});
