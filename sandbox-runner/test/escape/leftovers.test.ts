/**
 * Escape suite, prototype pollution and leftovers between executions. Proves, through the runner's gRPC
 * API, that two consecutive executions of the SAME workspace (the case a per-workspace warm sandbox must
 * get right) share nothing an execution can change: polluted built-in prototypes, replaced globals
 * (JSON, console, Promise.prototype.then, Map.prototype.get, queueMicrotask, Error.prepareStackTrace),
 * planted non-configurable globals and work left running are all gone for the next execution, whose
 * binding calls go out unmodified. Also proves that pollution inside one execution cannot forge that
 * execution's own reported result.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { ExecuteResult } from "@gatehouse/proto";
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

describe(`leftovers between executions of one workspace (runner sandbox: ${ESCAPE_MODE})`, () => {
  let runner: SandboxRunnerHandle;
  before(async () => {
    runner = await startEscapeRunner();
  });
  after(async () => {
    await runner.close();
  });

  /**
   * Runs `pollute` then `check` as consecutive executions of one fresh workspace; the first must succeed
   * (the pollution really happened), the second's parsed return value is returned.
   */
  async function consecutive<T>(
    pollute: string,
    check: string,
    bindings: Record<string, { main: Vault; methods: string[] }> = {},
  ): Promise<{ first: ExecuteResult; second: T }> {
    const workspaceId = `ws-leftover-${randomBytes(4).toString("hex")}`;
    const first = await exec(runner, pollute, { workspaceId, bindings });
    assert.equal(
      first.ok,
      true,
      `the polluting execution failed: ${first.error?.name}: ${first.error?.message}`,
    );
    const second = await exec(runner, check, { workspaceId, bindings });
    return { first, second: returned<T>(second) };
  }

  test("Object.prototype pollution does not reach the next execution", async () => {
    const { second } = await consecutive<unknown[]>(
      `export default async () => { (Object.prototype as any).isAdmin = true; return ({} as any).isAdmin; }`,
      `export default async () => [({} as any).isAdmin, "isAdmin" in {}]`,
    );
    assert.deepEqual(second, [null, false]);
  });

  test("a replaced Array.prototype.map does not reach the next execution", async () => {
    const { second } = await consecutive<unknown[]>(
      `export default async () => { Array.prototype.map = function () { return ["owned"]; } as any; return [1].map((x) => x); }`,
      `export default async () => [[1, 2].map((x) => x * 2), /\\[native code\\]/.test(String(Array.prototype.map))]`,
    );
    assert.deepEqual(second, [[2, 4], true]);
  });

  test("values and functions stashed on globalThis are gone for the next execution", async () => {
    const { second } = await consecutive<string[]>(
      `export default async () => { (globalThis as any).stash = { secret: "s3cr3t" }; (globalThis as any).hook = () => "mine"; }`,
      `export default async () => [typeof (globalThis as any).stash, typeof (globalThis as any).hook]`,
    );
    assert.deepEqual(second, ["undefined", "undefined"]);
  });

  test("a non-configurable global planted by one execution is absent in the next", async () => {
    const { second } = await consecutive<string>(
      `export default async () => { Object.defineProperty(globalThis, "planted", { value: "x", writable: false, configurable: false }); }`,
      `export default async () => String(Object.getOwnPropertyDescriptor(globalThis, "planted"))`,
    );
    assert.equal(second, "undefined");
  });

  test("a JSON.stringify that rewrote capnweb frames does not rewrite the next execution's calls", async () => {
    const vault = new Vault();
    const { second } = await consecutive<[number, boolean]>(
      `export default async () => {
        const real = JSON.stringify;
        (JSON as any).stringify = (v: unknown, ...rest: any[]) => real(v, ...rest)?.replace('["add"]', '["echo"]');
      }`,
      `export default async (env: any) => [await env.VAULT.add(1, 2), /\\[native code\\]/.test(String(JSON.stringify))]`,
      { VAULT: { main: vault, methods: VAULT_METHODS } },
    );
    assert.deepEqual(second, [3, true]);
    assert.deepEqual(vault.calls, ["add:1,2"]);
  });

  test("a Map.prototype.get hook (which catches the runner's transports) is gone for the next execution", async () => {
    const vault = new Vault();
    const { second } = await consecutive<[number, boolean]>(
      `export default async (env: any) => {
        const real = Map.prototype.get;
        Map.prototype.get = function (this: Map<unknown, unknown>, k: unknown) {
          const v: any = real.call(this, k);
          if (v && typeof v === "object" && "name" in v) v.name = "HIJACKED";
          return v;
        };
        await env.VAULT.add(0, 0);
      }`,
      `export default async (env: any) => [await env.VAULT.add(5, 5), /\\[native code\\]/.test(String(Map.prototype.get))]`,
      { VAULT: { main: vault, methods: VAULT_METHODS } },
    );
    assert.deepEqual(second, [10, true]);
    assert.deepEqual(vault.calls, ["add:0,0", "add:5,5"]);
  });

  test("a hijacked Promise.prototype.then does not reach the next execution", async () => {
    const { second } = await consecutive<[number, boolean]>(
      `export default async () => {
        const real = Promise.prototype.then;
        Promise.prototype.then = function (this: Promise<unknown>, ok?: any, err?: any) { return real.call(this, () => ok?.("owned"), err); } as any;
      }`,
      `export default async () => [await Promise.resolve(7), /\\[native code\\]/.test(String(Promise.prototype.then))]`,
    );
    assert.deepEqual(second, [7, true]);
  });

  test("a replaced console and queueMicrotask do not reach the next execution", async () => {
    const workspaceId = `ws-leftover-${randomBytes(4).toString("hex")}`;
    const first = await exec(
      runner,
      `export default async () => {
        (globalThis as any).console = { log() {} };
        (globalThis as any).queueMicrotask = () => { throw new Error("owned"); };
      }`,
      { workspaceId },
    );
    assert.equal(first.ok, true);
    const second = await exec(
      runner,
      `export default async () => {
        console.log("still mine");
        let ran = false;
        queueMicrotask(() => { ran = true; });
        await null;
        return ran;
      }`,
      { workspaceId },
    );
    assert.equal(returned<boolean>(second), true);
    assert.deepEqual(second.console, [{ level: "log", text: "still mine" }]);
  });

  test("an Error.prepareStackTrace hook does not reach the next execution", async () => {
    const { second } = await consecutive<string>(
      `export default async () => { (Error as any).prepareStackTrace = () => "owned"; }`,
      `export default async () => String(new Error("x").stack).split("\\n")[0]`,
    );
    assert.equal(second, "Error: x");
  });

  test("work left running after the default export returned ends with TimeoutError and never reaches the next execution", async () => {
    const workspaceId = `ws-leftover-${randomBytes(4).toString("hex")}`;
    const first = await exec(
      runner,
      `export default async () => {
        (async () => { for (;;) { await null; (globalThis as any).ticks = ((globalThis as any).ticks ?? 0) + 1; } })();
        return "returned";
      }`,
      { workspaceId, limits: { wallTimeMs: 1000 } },
    );
    assertFailed(first, "TimeoutError", /wall-time limit of 1000 ms/);
    const began = Date.now();
    const second = await exec(runner, `export default async () => typeof (globalThis as any).ticks`, {
      workspaceId,
      limits: { wallTimeMs: 5000 },
    });
    assert.equal(returned<string>(second), "undefined");
    assert.ok(Date.now() - began < 8000, `the next execution took ${Date.now() - began} ms`);
  });

  test("pollution inside an execution cannot forge that execution's own result", async () => {
    const r = await exec(
      runner,
      `export default async () => {
        (JSON as any).stringify = () => '{"ok":true,"returnJson":"\\\\"forged\\\\""}';
        (Object.prototype as any).ok = true;
        (Object.prototype as any).returnJson = '"forged"';
        throw new Error("the real outcome");
      }`,
    );
    assertFailed(r, "Error", /^the real outcome$/);
    assert.equal(r.returnJson, "");
  });
});
