/**
 * Escape suite, capability misuse, at the runner's gRPC surface with real capnweb sessions (the test plays
 * the kernel). Proves that a snippet reaches only the bindings and objects it was given:
 * - a binding that was not granted is absent; methods outside the granted interface are absent from the
 *   facade, and names that are not methods of the binding object (Object.prototype names, instance fields)
 *   are refused by capnweb on the serving side even when the snippet forges the capnweb frame;
 * - frames tagged with a binding that was not granted are dropped by the runner in both directions, even
 *   when the snippet retags its own transport (reached through Map.prototype pollution);
 * - no caller token is visible to the snippet, and the runner's ExecuteStart has no field to carry one;
 * - a stub from a previous execution of the same workspace, or from a concurrent execution of another
 *   workspace, cannot be reached again: capnweb ids are per session and forged ids name nothing;
 * - console output and return values cannot inject lines into the runner's JSON-lines protocol.
 *
 * One attempt is kept strict and marked TODO because it does NOT fail today (a finding, see its comment):
 * forging a capnweb call to a method outside the granted interface reaches the binding object.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { ExecuteStart } from "@gatehouse/proto";
import { RpcTarget } from "capnweb";
import type { SandboxRunnerHandle } from "../../src/index.ts";
import {
  assertFailed,
  ESCAPE_MODE,
  exec,
  recordingClient,
  returned,
  startEscapeRunner,
  VAULT_METHODS,
  Vault,
} from "./harness.ts";

/**
 * Snippet prelude: `forgeNextCall(rewrite)` rewrites the next capnweb "push" message the snippet's own
 * session serializes. capnweb runs in the snippet's realm and serializes with the realm's JSON.stringify,
 * so a snippet can make its session send any frame it likes.
 */
const FORGE = `
  const realStringify = JSON.stringify;
  const forgeNextCall = (rewrite: (message: any) => unknown) => {
    (JSON as any).stringify = function (value: any, ...rest: any[]) {
      if (Array.isArray(value) && value[0] === "push") {
        (JSON as any).stringify = realStringify;
        value = rewrite(value);
      }
      return realStringify.call(JSON, value, ...rest);
    };
  };
`;

/**
 * Snippet prelude: `transport()` returns the runner prelude's transport object for the binding whose frame
 * was last delivered (caught through a polluted Map.prototype.get); its `name` tags outgoing frames and its
 * `send(frame)` writes a raw frame.
 */
const CAPTURE = `
  let captured: any = null;
  const realGet = Map.prototype.get;
  Map.prototype.get = function (this: Map<unknown, unknown>, key: unknown) {
    const value: any = realGet.call(this, key);
    if (value && typeof value.send === "function" && typeof value.name === "string") captured = value;
    return value;
  };
  const transport = () => { if (!captured) throw new Error("transport not captured"); return captured; };
`;

/** A Vault whose `gate()` call stays pending until the test opens it (keeps an execution running). */
class GatedVault extends Vault {
  private open!: () => void;
  private readonly opened = new Promise<void>((resolve) => {
    this.open = resolve;
  });
  async gate(): Promise<string> {
    this.calls.push("gate");
    await this.opened;
    return "open";
  }
  release(): void {
    this.open();
  }
}

/** The kernel's membrane stand-in: stamps a caller token (held privately) on every call it forwards. */
class TokenMembrane extends RpcTarget {
  readonly #token: string;
  readonly #inner: Vault;
  readonly stamped: string[] = [];
  constructor(token: string, inner: Vault) {
    super();
    this.#token = token;
    this.#inner = inner;
  }
  add(a: number, b: number): number {
    this.stamped.push(this.#token);
    return this.#inner.add(a, b);
  }
  echo(value: unknown): unknown {
    this.stamped.push(this.#token);
    return this.#inner.echo(value);
  }
  note(text: string) {
    this.stamped.push(this.#token);
    return this.#inner.note(text);
  }
}

describe(`capability misuse (runner sandbox: ${ESCAPE_MODE})`, () => {
  let runner: SandboxRunnerHandle;
  before(async () => {
    runner = await startEscapeRunner();
  });
  after(async () => {
    await runner.close();
  });

  test("calling a binding that was not granted: TypeError, env has no such property", async () => {
    const r = await exec(runner, `export default async (env: any) => env.SLACK.postMessage("leak")`, {
      bindings: { VAULT: { main: new Vault(), methods: VAULT_METHODS } },
    });
    assertFailed(r, "TypeError", /^Cannot read properties of undefined \(reading 'postMessage'\)$/);
  });

  test("calling a method that is not on the granted interface: TypeError, the binding is not called", async () => {
    const vault = new Vault();
    const r = await exec(runner, `export default async (env: any) => env.VAULT.secret()`, {
      bindings: { VAULT: { main: vault, methods: VAULT_METHODS } },
    });
    assertFailed(r, "TypeError", /^env\.VAULT\.secret is not a function$/);
    assert.deepEqual(vault.calls, []);
  });

  test("adding the missing method to the facade: TypeError (env and each facade are frozen)", async () => {
    const r = await exec(
      runner,
      `export default async (env: any) => {
        "use strict";
        Object.defineProperty(env.VAULT, "secret", { value: () => "mine" });
      }`,
      { bindings: { VAULT: { main: new Vault(), methods: VAULT_METHODS } } },
    );
    assertFailed(r, "TypeError", /^Cannot define property secret, object is not extensible$/);
  });

  test("pipelining the missing method onto a granted call's result: refused by capnweb, secret never called", async () => {
    const vault = new Vault();
    const r = await exec(runner, `export default async (env: any) => env.VAULT.add(1, 2).secret()`, {
      bindings: { VAULT: { main: vault, methods: VAULT_METHODS } },
    });
    assertFailed(r, "TypeError", /^'secret' is not a function\.$/);
    assert.deepEqual(vault.calls, ["add:1,2"]);
  });

  // Was a finding: a snippet that swaps JSON.stringify (which capnweb uses) rewrote `add` into
  // `secret` and the binding object ran it, because the only method filter was the facade in the
  // snippet's own realm. The isolate host (and the runner again) now check every call on a
  // binding's main object against the granted methods, outside the isolate.
  test("forging a capnweb frame that calls a method outside the granted interface: CapabilityError, never sent", async () => {
    const vault = new Vault();
    const r = await exec(
      runner,
      `export default async (env: any) => {
        ${FORGE}
        forgeNextCall((m) => ["push", ["pipeline", 0, ["secret"], []]]);
        return await env.VAULT.add(1, 2);
      }`,
      { bindings: { VAULT: { main: vault, methods: VAULT_METHODS } } },
    );
    assertFailed(
      r,
      "CapabilityError",
      /call to "secret" on binding VAULT, which is not one of its granted methods/,
    );
    assert.deepEqual(vault.calls, [], "the binding never ran anything");
  });

  test("forged calls to Object.prototype names (constructor, __proto__, toString, hasOwnProperty): CapabilityError", async () => {
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const vault = new Vault();
      const r = await exec(
        runner,
        `export default async (env: any) => {
          ${FORGE}
          forgeNextCall(() => ["push", ["pipeline", 0, [${JSON.stringify(name)}], []]]);
          return await env.VAULT.add(1, 1);
        }`,
        { bindings: { VAULT: { main: vault, methods: VAULT_METHODS } } },
      );
      assertFailed(r, "CapabilityError", new RegExp(`call to "${name}" on binding VAULT`));
      assert.deepEqual(vault.calls, []);
    }
  });

  test("a forged call reading the binding object's private state (an instance field): CapabilityError", async () => {
    const vault = new Vault();
    const r = await exec(
      runner,
      `export default async (env: any) => {
        ${FORGE}
        forgeNextCall(() => ["push", ["pipeline", 0, ["calls"], []]]);
        return await env.VAULT.add(1, 1);
      }`,
      { bindings: { VAULT: { main: vault, methods: VAULT_METHODS } } },
    );
    assertFailed(r, "CapabilityError", /call to "calls" on binding VAULT/);
  });

  test("frames the snippet tags with a binding that was not granted are dropped by the runner", async () => {
    const vault = new Vault();
    const recorder = recordingClient(runner);
    try {
      const r = await exec(
        runner,
        `export default async (env: any) => {
          ${CAPTURE}
          await env.VAULT.add(0, 0);
          const t = transport();
          for (const name of ["SECRET", "__proto__", "constructor", ""]) {
            t.name = name;
            t.send(JSON.stringify(["push", ["pipeline", 0, ["secret"], []]]));
          }
          t.name = "VAULT";
          return await env.VAULT.add(20, 22);
        }`,
        { client: recorder.client, bindings: { VAULT: { main: vault, methods: VAULT_METHODS } } },
      );
      assert.equal(returned<number>(r), 42, "the session still works after the dropped frames");
      const fromRunner = recorder.frames.filter((f) => f.direction === "from-runner");
      assert.ok(fromRunner.length > 0);
      assert.deepEqual([...new Set(fromRunner.map((f) => f.binding))], ["VAULT"]);
      assert.deepEqual(vault.calls, ["add:0,0", "add:20,22"]);
    } finally {
      recorder.close();
    }
  });

  test("frames the kernel side sends for a binding that was not granted never reach the isolate", async () => {
    const recorder = recordingClient(runner, {
      onRunnerFrame: (frame, write) => {
        if (frame.data.startsWith('["push"')) {
          for (const binding of ["SECRET", "__proto__", "constructor", ""]) {
            write({
              msg: { $case: "frame", frame: { binding, data: '["abort",["error","Error","injected"]]' } },
            });
          }
        }
      },
    });
    try {
      const r = await exec(
        runner,
        `export default async (env: any) => {
          const looked: string[] = [];
          const realGet = Map.prototype.get;
          Map.prototype.get = function (this: Map<unknown, unknown>, key: unknown) {
            if (typeof key === "string") looked.push(key);
            return realGet.call(this, key);
          };
          const sum = await env.VAULT.add(1, 2);
          Map.prototype.get = realGet;
          return { sum, looked: [...new Set(looked)] };
        }`,
        { client: recorder.client, bindings: { VAULT: { main: new Vault(), methods: VAULT_METHODS } } },
      );
      const out = returned<{ sum: number; looked: string[] }>(r);
      assert.equal(out.sum, 3);
      assert.ok(out.looked.includes("VAULT"), "control: delivering the binding's own frames was observed");
      const leaked = out.looked.filter((k) => ["SECRET", "__proto__", "constructor", ""].includes(k));
      assert.deepEqual(leaked, [], "a frame for a binding that was not granted reached the isolate");
      assert.ok(recorder.frames.some((f) => f.direction === "to-runner" && f.binding === "SECRET"));
    } finally {
      recorder.close();
    }
  });

  test("no caller token is visible to the snippet, and ExecuteStart has no field that could carry one", async () => {
    assert.deepEqual(
      Object.keys(ExecuteStart.fromPartial({})).filter((k) => /token|caller|secret|credential/i.test(k)),
      [],
    );
    const token = `tok-${randomBytes(12).toString("hex")}`;
    const membrane = new TokenMembrane(token, new Vault());
    const r = await exec(
      runner,
      `export default async (env: any) => {
        const note = await env.VAULT.note("n");
        const sum = await env.VAULT.add(1, 2);
        const seen = new Set<unknown>();
        const strings: string[] = [];
        const walk = (v: any, depth: number) => {
          if (typeof v === "string") { strings.push(v); return; }
          if (depth > 8 || v === null || (typeof v !== "object" && typeof v !== "function") || seen.has(v)) return;
          seen.add(v);
          let keys: (string | symbol)[] = [];
          try { keys = Reflect.ownKeys(v); } catch { return; }
          for (const key of keys) {
            strings.push(String(key));
            let d: PropertyDescriptor | undefined;
            try { d = Object.getOwnPropertyDescriptor(v, key); } catch { continue; }
            if (d && "value" in d) walk(d.value, depth + 1);
          }
          try { walk(Object.getPrototypeOf(v), depth + 1); } catch {}
        };
        walk(globalThis, 0);
        walk(env, 0);
        walk(note, 0);
        for (const f of Object.values(env.VAULT) as any[]) strings.push(String(f));
        return { sum, strings };
      }`,
      { bindings: { VAULT: { main: membrane, methods: VAULT_METHODS } } },
    );
    const { sum, strings } = returned<{ sum: number; strings: string[] }>(r);
    assert.equal(sum, 3);
    assert.equal(membrane.stamped.length, 2, "control: the kernel side did stamp its token on each call");
    assert.deepEqual(
      strings.filter((s) => s.includes(token) || /token/i.test(s)),
      [],
    );
  });

  test("a stub kept from a previous execution of the same workspace is gone, and its capnweb id names nothing", async () => {
    const vault = new Vault();
    const bindings = { VAULT: { main: vault, methods: VAULT_METHODS } };
    const first = await exec(
      runner,
      `export default async (env: any) => {
        const notes = [];
        for (let i = 1; i <= 5; i++) notes.push(env.VAULT.note("kept-" + i));
        (globalThis as any).keptNote = notes[4];
        return await notes[4].read();
      }`,
      { bindings, workspaceId: "ws-reuse" },
    );
    assert.equal(returned<string>(first), "kept-5");
    const readsBefore = vault.calls.filter((c) => c.startsWith("read:")).length;
    const second = await exec(
      runner,
      `export default async (env: any) => {
        ${FORGE}
        const out: Record<string, string> = { kept: typeof (globalThis as any).keptNote };
        // capnweb import id 5 was the kept note in the previous execution's session
        forgeNextCall(() => ["push", ["pipeline", 5, ["read"], []]]);
        try { out.reuse = "returned " + (await env.VAULT.add(0, 0)); } catch (e: any) { out.reuse = e.name + ": " + e.message; }
        return out;
      }`,
      { bindings, workspaceId: "ws-reuse" },
    );
    const out = returned<{ kept: string; reuse: string }>(second);
    assert.equal(out.kept, "undefined");
    assert.equal(out.reuse, "Error: no such entry on exports table: 5");
    assert.equal(
      vault.calls.filter((c) => c.startsWith("read:")).length,
      readsBefore,
      "the old note was read",
    );
  });

  test("a concurrent execution of another workspace cannot reach that workspace's binding or objects", async () => {
    const vaultA = new GatedVault("A");
    const vaultB = new Vault("B");
    const recorderA = recordingClient(runner);
    try {
      const execA = exec(
        runner,
        `export default async (env: any) => {
          const notes = [];
          for (let i = 1; i <= 5; i++) notes.push(env.VAULT_A.note("a-private-" + i));
          await Promise.all(notes.map((n) => n.read()));
          return await env.VAULT_A.gate();
        }`,
        {
          client: recorderA.client,
          workspaceId: "ws-a",
          bindings: { VAULT_A: { main: vaultA, methods: [...VAULT_METHODS, "gate"] } },
        },
      );
      const deadline = Date.now() + 60_000;
      while (!vaultA.calls.includes("gate")) {
        assert.ok(Date.now() < deadline, `workspace A never reached its gate: ${vaultA.calls.join(", ")}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const execB = await exec(
        runner,
        `export default async (env: any) => {
          ${FORGE}
          ${CAPTURE}
          const out: Record<string, unknown> = {};
          try { await env.VAULT_A.add(1, 1); } catch (e: any) { out.direct = e.name + ": " + e.message; }
          out.own = await env.VAULT.add(2, 2);
          const t = transport();
          t.name = "VAULT_A";
          t.send(JSON.stringify(["push", ["pipeline", 0, ["echo"], ["from-B"]]]));
          t.name = "VAULT";
          out.after = await env.VAULT.add(3, 3);
          forgeNextCall(() => ["push", ["pipeline", 5, ["read"], []]]);
          try { out.borrow = "returned " + (await env.VAULT.add(0, 0)); } catch (e: any) { out.borrow = e.name + ": " + e.message; }
          return out;
        }`,
        { workspaceId: "ws-b", bindings: { VAULT: { main: vaultB, methods: VAULT_METHODS } } },
      );
      vaultA.release();
      assert.equal(returned<string>(await execA), "open");
      const out = returned<Record<string, unknown>>(execB);
      assert.equal(out.direct, "TypeError: Cannot read properties of undefined (reading 'add')");
      assert.equal(out.own, 4);
      assert.equal(out.after, 6);
      assert.equal(out.borrow, "Error: no such entry on exports table: 5");
      const readsOfA = vaultA.calls.filter((c) => c.startsWith("read:"));
      assert.equal(readsOfA.length, 5, "A read its own notes once each, nobody else did");
      assert.ok(!vaultA.calls.some((c) => c.startsWith("echo")), "B's retagged frame reached A's binding");
      assert.ok(!recorderA.frames.some((f) => f.data.includes("from-B")), "B's frame appeared on A's stream");
      assert.deepEqual(vaultB.calls, ["add:2,2", "add:3,3"]);
    } finally {
      vaultA.release();
      recorderA.close();
    }
  });

  test("two workspaces running at once are in different sandbox processes (pool introspection)", async (t) => {
    const pool = (runner as unknown as { pool?: { describe?: () => unknown } }).pool;
    if (typeof pool?.describe !== "function") {
      t.skip("GAP: this runner exposes no pool introspection (SandboxRunnerHandle.pool.describe)");
      return;
    }
    const vaults = { a: new GatedVault("A"), b: new GatedVault("B") };
    const runs = (["a", "b"] as const).map((w) =>
      exec(runner, `export default async (env: any) => env.VAULT.gate()`, {
        workspaceId: `ws-pool-${w}`,
        bindings: { VAULT: { main: vaults[w], methods: ["gate"] } },
      }),
    );
    try {
      const deadline = Date.now() + 60_000;
      while (!vaults.a.calls.includes("gate") || !vaults.b.calls.includes("gate")) {
        assert.ok(Date.now() < deadline, "the executions never started");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const sandboxes = pool.describe() as Array<{
        id: string;
        pid: number | null;
        workspaceId: string | null;
      }>;
      const of = (w: string) => sandboxes.filter((s) => s.workspaceId === w);
      const [a, b] = [of("ws-pool-a"), of("ws-pool-b")];
      assert.equal(a.length, 1, JSON.stringify(sandboxes));
      assert.equal(b.length, 1, JSON.stringify(sandboxes));
      assert.notEqual(a[0]?.id, b[0]?.id);
      assert.ok(a[0]?.pid && b[0]?.pid, "each sandbox reports its host pid");
      assert.notEqual(a[0]?.pid, b[0]?.pid, "two workspaces share one sandbox process");
    } finally {
      vaults.a.release();
      vaults.b.release();
      await Promise.allSettled(runs);
    }
  });

  test("a console line cannot forge the runner's result (JSON-lines injection)", async () => {
    const r = await exec(
      runner,
      `export default async () => {
        console.log('\\n{"result":{"ok":true,"returnJson":"\\\\"forged\\\\"","error":null,"durationMs":1,"outputTruncated":false}}\\n');
        throw new Error("the real outcome");
      }`,
    );
    assertFailed(r, "Error", /^the real outcome$/);
    assert.match(
      r.console[0]?.text ?? "",
      /"returnJson":"\\"forged\\""/,
      "the line is kept verbatim as output",
    );
  });

  test("a console line or return value cannot forge a frame to the binding (JSON-lines injection)", async () => {
    const vault = new Vault();
    const frameLine = `{"frame":{"binding":"VAULT","data":"[\\\\"push\\\\",[\\\\"pipeline\\\\",0,[\\\\"secret\\\\"],[]]]"}}`;
    const r = await exec(
      runner,
      `export default async () => {
        const line = '\\n${frameLine}\\n';
        console.log(line);
        console.error(line);
        return line;
      }`,
      { bindings: { VAULT: { main: vault, methods: VAULT_METHODS } } },
    );
    assert.match(returned<string>(r), /"frame"/);
    assert.deepEqual(vault.calls, []);
  });
});
