import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { SandboxRunnerHandle } from "../src/index.ts";
import { GVISOR_DISABLED_WARNING } from "../src/index.ts";
import { listeningServer, MemoryBinding, MODES, run, startTestRunner } from "./helpers.ts";

for (const mode of MODES) {
  describe(`sandbox runner (sandbox: ${mode})`, () => {
    let runner: SandboxRunnerHandle;
    before(async () => {
      runner = await startTestRunner(mode);
      assert.equal(runner.mode, mode);
    });
    after(async () => {
      await runner.close();
    });

    test("fetch, require, process, setTimeout and the capnweb loader are not reachable from a snippet", async () => {
      const r = await run(
        runner,
        `export default async (env: Record<string, unknown>) => ({
          fetch: typeof fetch, require: typeof require, process: typeof process, setTimeout: typeof setTimeout,
          capnweb: typeof capnweb, WebSocket: typeof WebSocket, envKeys: Object.keys(env), frozen: Object.isFrozen(env),
        })`,
      );
      assert.equal(r.ok, true, JSON.stringify(r.error));
      assert.deepEqual(JSON.parse(r.returnJson), {
        fetch: "undefined",
        require: "undefined",
        process: "undefined",
        setTimeout: "undefined",
        capnweb: "undefined",
        WebSocket: "undefined",
        envKeys: [],
        frozen: true,
      });
    });

    test("a binding call round-trips arguments, return values and thrown errors, and a returned stub stays callable", async () => {
      const memory = new MemoryBinding();
      const r = await run(
        runner,
        `export default async (env: any) => {
          const sum: number = await env.MEMORY.add(2, 40);
          const echoed = await env.MEMORY.echo({ nested: [1, "two", { three: true }] });
          let thrown: string;
          try { await env.MEMORY.fail("no way"); thrown = "did not throw"; }
          catch (e) { thrown = e.name + ": " + e.message; }
          const note = await env.MEMORY.note("hello");
          const appended = await note.append(" world");
          const read = await note.read();
          return { sum, echoed, thrown, appended, read };
        }`,
        { MEMORY: { main: memory, methods: ["add", "echo", "fail", "note"] } },
      );
      assert.equal(r.ok, true, JSON.stringify(r.error));
      assert.deepEqual(JSON.parse(r.returnJson), {
        sum: 42,
        echoed: { nested: [1, "two", { three: true }] },
        thrown: "RangeError: refused: no way",
        appended: "hello world",
        read: "hello world",
      });
      assert.deepEqual(memory.calls, ["add:2,40", "echo", "fail", "note:hello", "read:hello world"]);
    });

    test("a method not on the binding's interface is undefined and never reaches the binding", async () => {
      const memory = new MemoryBinding();
      const r = await run(
        runner,
        `export default async (env: any) => {
          let threw = "";
          try { await env.MEMORY.note("x"); } catch (e: any) { threw = e.name; }
          return { note: typeof env.MEMORY.note, add: typeof env.MEMORY.add, keys: Object.keys(env.MEMORY), threw,
                   frozen: Object.isFrozen(env.MEMORY) };
        }`,
        { MEMORY: { main: memory, methods: ["add"] } },
      );
      assert.equal(r.ok, true, JSON.stringify(r.error));
      assert.deepEqual(JSON.parse(r.returnJson), {
        note: "undefined",
        add: "function",
        keys: ["add"],
        threw: "TypeError",
        frozen: true,
      });
      assert.deepEqual(memory.calls, []);
    });

    test("a binding that was not granted is undefined on env", async () => {
      const r = await run(
        runner,
        `export default async (env: any) => ({ slack: typeof env.SLACK, memory: typeof env.MEMORY, keys: Object.keys(env) })`,
        { MEMORY: { main: new MemoryBinding(), methods: ["add"] } },
      );
      assert.equal(r.ok, true, JSON.stringify(r.error));
      assert.deepEqual(JSON.parse(r.returnJson), {
        slack: "undefined",
        memory: "object",
        keys: ["MEMORY"],
      });
    });

    test("a snippet cannot open a TCP connection to a server on the host's 127.0.0.1", async () => {
      const server = await listeningServer();
      try {
        const r = await run(
          runner,
          `export default async () => {
            const attempts: string[] = [];
            for (const attempt of [
              () => fetch("http://127.0.0.1:${server.port}/"),
              () => new WebSocket("ws://127.0.0.1:${server.port}/"),
              () => import("node:net"),
            ]) {
              try { await attempt(); attempts.push("connected"); } catch (e) { attempts.push("failed: " + e.name); }
            }
            return attempts;
          }`,
        );
        const attempts = r.ok ? (JSON.parse(r.returnJson) as string[]) : [];
        assert.ok(!attempts.includes("connected"), `a connection attempt succeeded: ${r.returnJson}`);
        assert.equal(server.connections(), 0, "the host server saw a connection");
      } finally {
        await server.close();
      }
    });

    test("imports are refused with an error naming the import and its line", async () => {
      const r = await run(
        runner,
        `// a comment\nimport { connect } from "node:net";\nexport default async () => connect`,
      );
      assert.equal(r.ok, false);
      assert.equal(r.error?.name, "ImportError");
      assert.match(r.error?.message ?? "", /node:net/);
      assert.equal(r.error?.line, 2);
    });

    test("an infinite loop stops at the wall-time limit with a TimeoutError", async () => {
      const began = Date.now();
      const r = await run(runner, `export default async () => { for (;;) {} }`, {}, { wallTimeMs: 500 });
      assert.equal(r.ok, false);
      assert.equal(r.error?.name, "TimeoutError");
      assert.match(r.error?.message ?? "", /wall_time_ms/);
      assert.ok(r.durationMs >= 500 && r.durationMs < 2000, `duration ${r.durationMs} ms`);
      assert.ok(Date.now() - began < 10_000);
    });

    test("a 2 GB allocation stops at the heap limit with a HeapLimitError", async () => {
      for (const code of [
        `export default async () => new Uint8Array(2 * 1024 * 1024 * 1024).length`,
        `export default async () => { const chunks = []; for (let i = 0; i < 2048; i++) chunks.push(new Array(131072).fill(i)); return chunks.length; }`,
      ]) {
        const r = await run(runner, code, {}, { heapMb: 64 });
        assert.equal(r.ok, false, code);
        assert.equal(r.error?.name, "HeapLimitError", JSON.stringify(r.error));
        assert.match(r.error?.message ?? "", /heap limit of 64 MiB/);
      }
    });

    test("a syntax error reports the line it is on", async () => {
      const r = await run(
        runner,
        `export default async (env: any) => {\n  const x: number = 1;\n  return x +;\n};\n`,
      );
      assert.equal(r.ok, false);
      assert.equal(r.error?.name, "SyntaxError");
      assert.equal(r.error?.line, 3);
      const early = await run(runner, `export default async () => {\n  let a = 1;\n\n  let a = 2;\n};\n`);
      assert.equal(early.error?.name, "SyntaxError");
      assert.equal(early.error?.line, 4);
    });

    test("a runtime error's stack and position name the snippet line that threw", async () => {
      const r = await run(
        runner,
        `type T = { n: number };\nexport default async (env: unknown) => {\n  const t: T = { n: 1 };\n  if (t.n) throw new TypeError("bad n");\n};\n`,
      );
      assert.equal(r.ok, false);
      assert.equal(r.error?.name, "TypeError");
      assert.equal(r.error?.message, "bad n");
      assert.match(r.error?.stack ?? "", /snippet\.ts:4:/);
      assert.equal(r.error?.line, 4);
      assert.ok((r.error?.column ?? 0) > 0);
    });

    test("console output past the cap is truncated with a marker and outputTruncated", async () => {
      const r = await run(
        runner,
        `export default async () => { for (let i = 0; i < 100000; i++) console.log("line " + i + " " + "x".repeat(50)); return "done"; }`,
        {},
        { outputBytes: 1000 },
      );
      assert.equal(r.ok, true, JSON.stringify(r.error));
      assert.equal(r.returnJson, '"done"');
      assert.equal(r.outputTruncated, true);
      const texts = r.console.map((l) => l.text);
      assert.match(texts.at(-1) ?? "", /truncated/);
      const bytes = r.console.slice(0, -1).reduce((n, l) => n + Buffer.byteLength(l.text), 0);
      assert.ok(bytes <= 1000, `kept ${bytes} bytes`);
      assert.equal(texts[0], `line 0 ${"x".repeat(50)}`);
    });

    test("console lines keep their level and order, and the result carries JSON and the execution id", async () => {
      const r = await run(
        runner,
        `export default async () => { console.log("a", 1, {b: 2}); console.error("c"); return [1, "x"]; }`,
      );
      assert.deepEqual(r.console, [
        { level: "log", text: 'a 1 {"b":2}' },
        { level: "error", text: "c" },
      ]);
      assert.equal(r.returnJson, '[1,"x"]');
      assert.match(r.executionId, /^test-/);
      if (mode === "none") assert.deepEqual(r.warnings, [GVISOR_DISABLED_WARNING]);
      else assert.deepEqual(r.warnings, []);
    });
  });
}
