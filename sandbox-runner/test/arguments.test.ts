import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { SandboxRunnerHandle } from "../src/index.ts";
import { returned } from "./escape/harness.ts";
import { MemoryBinding, MODES, run, startTestRunner } from "./helpers.ts";

/** Each bad argument the snippet passes, and the message it must get (argument number and path named). */
const CASES: [string, RegExp][] = [
  [
    "env.MEMORY.echo(Promise.resolve(1))",
    /^env\.MEMORY\.echo: argument 1 is a Promise; await it first; binding arguments must be plain JSON/,
  ],
  [
    'env.MEMORY.echo({ path: "a.md", content: Promise.resolve("x") })',
    /^env\.MEMORY\.echo: argument 1 \(content\) is a Promise; await it first/,
  ],
  [
    'env.MEMORY.add(1, { changes: [{ path: "a" }, { content: { then(r: any) { r(1); } } }] })',
    /^env\.MEMORY\.add: argument 2 \(changes\[1\]\.content\) is a thenable \(an object with a then method\); await it first/,
  ],
  [
    "env.MEMORY.echo({ body: { getReader() { return null; } } })",
    /argument 1 \(body\) is a stream; read it into a string first/,
  ],
  ['env.MEMORY.echo({ tags: new Set(["a"]) })', /argument 1 \(tags\) is a Set; pass \[\.\.\.set\]/],
  ["env.MEMORY.echo(new Map())", /argument 1 is a Map; pass Object\.fromEntries\(map\)/],
  ["env.MEMORY.echo({ when: new Date(0) })", /argument 1 \(when\) is a Date; pass date\.toISOString\(\)/],
  ["env.MEMORY.echo(new Uint8Array(2))", /argument 1 is a Uint8Array; pass the data as a string/],
  ['env.MEMORY.echo({ cause: new Error("x") })', /argument 1 \(cause\) is an Error \(a class instance\)/],
  [
    'env.MEMORY.echo({ "a b": () => 1 })',
    /argument 1 \(\["a b"\]\) is a function; functions cannot be passed/,
  ],
  ["env.MEMORY.echo(new (class Point { x = 1 })())", /argument 1 is a Point \(a class instance\)/],
  ["env.MEMORY.echo(Object.create(null))", /argument 1 is an object with a null prototype/],
  ["env.MEMORY.echo({ n: NaN })", /argument 1 \(n\) is NaN, not a JSON number/],
  ["env.MEMORY.echo(2n)", /argument 1 is a bigint/],
  [
    "env.MEMORY.echo((() => { const o: any = { a: {} }; o.a.o = o; return o; })())",
    /argument 1 \(a\.o\) refers back to an enclosing value \(a cycle\)/,
  ],
];

for (const mode of MODES) {
  describe(`binding arguments that are not plain JSON (sandbox: ${mode})`, () => {
    let runner: SandboxRunnerHandle;
    before(async () => {
      runner = await startTestRunner(mode);
    });
    after(async () => {
      await runner.close();
    });

    test("a Promise, thenable, stream, Map, Set, Date, bytes, function, class instance, NaN, bigint or cycle is named with its argument and path, and never reaches the binding", async () => {
      const memory = new MemoryBinding();
      const r = await run(
        runner,
        `export default async (env: any) => {
          const out: string[] = [];
          const calls = [${CASES.map(([c]) => `() => ${c}`).join(",\n")}];
          for (const call of calls) {
            try { await call(); out.push("no error"); } catch (e: any) { out.push(e.name + ": " + e.message); }
          }
          return out;
        }`,
        { MEMORY: { main: memory, methods: ["add", "echo"] } },
      );
      const messages = returned<string[]>(r);
      assert.equal(messages.length, CASES.length);
      CASES.forEach(([call, expected], i) => {
        assert.match(messages[i]!, /^TypeError: /, `${call}: ${messages[i]}`);
        assert.match(messages[i]!.slice("TypeError: ".length), expected, call);
      });
      assert.deepEqual(memory.calls, [], "no refused call reached the binding");
    });

    test("plain JSON, undefined fields, shared (acyclic) values and pipelined results (an RpcPromise argument) still pass", async () => {
      const memory = new MemoryBinding();
      const r = await run(
        runner,
        `export default async (env: any) => {
          const shared = { k: 1 };
          const echoed = await env.MEMORY.echo({ a: [shared, shared], b: undefined, c: null, d: "x", e: -0.5, f: true });
          const pipelined = await env.MEMORY.add(env.MEMORY.add(1, 2), 4);
          const note = await env.MEMORY.note("hi");
          return { echoed, pipelined, read: await note.read() };
        }`,
        { MEMORY: { main: memory, methods: ["add", "echo", "note"] } },
      );
      assert.deepEqual(returned(r), {
        echoed: { a: [{ k: 1 }, { k: 1 }], c: null, d: "x", e: -0.5, f: true },
        pipelined: 7,
        read: "hi",
      });
      assert.deepEqual(memory.calls, ["echo", "add:1,2", "add:3,4", "note:hi", "read:hi"]);
    });
  });
}
