/**
 * Escape suite, `env` enumeration. Proves that a snippet learns nothing about bindings it was not granted:
 * every way of enumerating or probing `env` (keys, own keys, for-in, descriptors, symbols, JSON, `in`,
 * hasOwnProperty) shows exactly the granted names; env and each binding facade are frozen plain objects of
 * data properties (no getter or proxy that could consult anything outside the isolate); and looking up a
 * name that another workspace holds right now costs the same as a name that exists nowhere, with no
 * round trip out of the isolate.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { SandboxRunnerHandle } from "../../src/index.ts";
import { ESCAPE_MODE, exec, returned, startEscapeRunner, VAULT_METHODS, Vault } from "./harness.ts";

/** A Vault whose `gate()` stays pending until released (keeps another workspace's execution alive). */
class HeldVault extends Vault {
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

describe(`env enumeration (runner sandbox: ${ESCAPE_MODE})`, () => {
  let runner: SandboxRunnerHandle;
  before(async () => {
    runner = await startEscapeRunner();
  });
  after(async () => {
    await runner.close();
  });

  const granted = () => ({
    GITHUB: { main: new Vault("github"), methods: ["add", "echo"] },
    MEMORY: { main: new Vault("memory"), methods: VAULT_METHODS },
  });

  test("every way of enumerating env shows exactly the granted names", async () => {
    const r = await exec(
      runner,
      `export default async (env: any) => {
        const forIn: string[] = [];
        for (const k in env) forIn.push(k);
        return {
          keys: Object.keys(env),
          ownKeys: Reflect.ownKeys(env).map(String),
          names: Object.getOwnPropertyNames(env),
          symbols: Object.getOwnPropertySymbols(env).length,
          forIn,
          descriptors: Object.keys(Object.getOwnPropertyDescriptors(env)),
          json: Object.keys(JSON.parse(JSON.stringify(env))),
          entries: Object.entries(env).map(([k]) => k),
        };
      }`,
      { bindings: granted() },
    );
    const out = returned<Record<string, unknown>>(r);
    const names = ["GITHUB", "MEMORY"];
    assert.deepEqual(out, {
      keys: names,
      ownKeys: names,
      names,
      symbols: 0,
      forIn: names,
      descriptors: names,
      json: names,
      entries: names,
    });
  });

  test("probing for bindings that exist elsewhere (SLACK, POSTGRES, another workspace's) finds nothing", async () => {
    const r = await exec(
      runner,
      `export default async (env: any) => ["SLACK", "POSTGRES", "OTHER_WORKSPACE_DB", "__proto__", "constructor"].map((n) => [
        n, n in env && Object.prototype.hasOwnProperty.call(env, n), Object.prototype.hasOwnProperty.call(env, n),
        typeof Object.getOwnPropertyDescriptor(env, n),
      ])`,
      { bindings: granted() },
    );
    for (const [name, inOwn, own, descriptor] of returned<[string, boolean, boolean, string][]>(r)) {
      assert.equal(inOwn, false, name);
      assert.equal(own, false, name);
      assert.equal(descriptor, "undefined", name);
    }
  });

  test("env and each facade are frozen plain objects of data properties listing only granted methods", async () => {
    const r = await exec(
      runner,
      `export default async (env: any) => {
        const shape = (o: any) => ({
          frozen: Object.isFrozen(o),
          extensible: Object.isExtensible(o),
          protoIsObject: Object.getPrototypeOf(o) === Object.prototype,
          accessors: Object.values(Object.getOwnPropertyDescriptors(o)).filter((d: any) => "get" in d || "set" in d).length,
          keys: Object.keys(o),
        });
        return { env: shape(env), GITHUB: shape(env.GITHUB), MEMORY: shape(env.MEMORY) };
      }`,
      { bindings: granted() },
    );
    const out =
      returned<
        Record<
          string,
          { frozen: boolean; extensible: boolean; protoIsObject: boolean; accessors: number; keys: string[] }
        >
      >(r);
    const expected = { GITHUB: ["add", "echo"], MEMORY: VAULT_METHODS, env: ["GITHUB", "MEMORY"] };
    for (const [name, keys] of Object.entries(expected)) {
      assert.deepEqual(
        out[name],
        { frozen: true, extensible: false, protoIsObject: true, accessors: 0, keys },
        name,
      );
    }
  });

  test("looking up a name another workspace holds right now costs the same as a name that exists nowhere", async () => {
    const other = new HeldVault("other");
    const otherRun = exec(runner, `export default async (env: any) => env.OTHER_WORKSPACE_DB.gate()`, {
      workspaceId: "ws-other",
      bindings: { OTHER_WORKSPACE_DB: { main: other, methods: ["gate"] } },
    });
    try {
      const deadline = Date.now() + 60_000;
      while (!other.calls.includes("gate")) {
        assert.ok(Date.now() < deadline, "the other workspace's execution never started");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const r = await exec(
        runner,
        `export default async (env: any) => {
          const names = ["OTHER_WORKSPACE_DB", "NEVER_GRANTED_ANYWHERE"];
          const samples: number[][] = [[], []];
          let found = 0;
          for (let round = 0; round < 15; round++) {
            for (let step = 0; step < 2; step++) {
              const which = (round + step) % 2;
              const name = names[which];
              const began = Date.now();
              for (let i = 0; i < 500000; i++) if (env[name + ""] !== undefined) found++;
              samples[which].push(Date.now() - began);
            }
          }
          const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
          const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
          return { found, medians: samples.map(median), totals: samples.map(total) };
        }`,
        { workspaceId: "ws-probe", bindings: granted(), limits: { wallTimeMs: 20_000 } },
      );
      const out = returned<{ found: number; medians: [number, number]; totals: [number, number] }>(r);
      assert.equal(out.found, 0, "a lookup of a name that was not granted found something");
      // 15 x 500,000 lookups each: a round trip out of the isolate per lookup would take minutes.
      assert.ok(out.totals[0] < 3000 && out.totals[1] < 3000, `lookups took ${out.totals.join(" / ")} ms`);
      const [elsewhere, nowhere] = out.medians;
      assert.ok(
        Math.abs(elsewhere - nowhere) <= 2 + 0.5 * Math.max(elsewhere, nowhere),
        `median ms per 500,000 lookups: held elsewhere ${elsewhere}, nowhere ${nowhere}`,
      );
    } finally {
      other.release();
      await otherRun;
    }
  });
});
