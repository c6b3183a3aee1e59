/**
 * Classification of odd annotations on a tiny REAL MCP server (test/fixtures), and the generated
 * .d.ts compiled with tsc for the odd server and the real memory server. FakeApprovalQueue stands
 * in for services/approval (the real approval service is tested in the cross-service suite).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import type { ResolveResourceResponse } from "@gatehouse/proto";
import {
  countedStdio,
  type Harness,
  MEMORY_SERVER,
  ODD_SERVER,
  openBinding,
  rejects,
  startHarness,
  tempDir,
  unary,
} from "./helpers.ts";

let h: Harness;
let tmp: ReturnType<typeof tempDir>;

before(async () => {
  tmp = tempDir();
  h = await startHarness({
    servers: {
      odd: countedStdio(join(tmp.dir, "odd.txt"), ODD_SERVER),
      memory: countedStdio(join(tmp.dir, "mem.txt"), MEMORY_SERVER, [], {
        MEMORY_FILE_PATH: join(tmp.dir, "m.jsonl"),
      }),
    },
  });
});
after(async () => {
  await h.close();
  tmp.remove();
});

const resolveUrl = (url: string) =>
  unary<{ url: string; name: string }, ResolveResourceResponse>(h.client.resolveResource.bind(h.client), {
    url,
    name: "",
  });

test('a tool whose readOnlyHint is the string "true" is an action (pending, not read)', async () => {
  const b = openBinding(h.client, "ODD", "mcp://odd");
  try {
    const p = await b.stub.string_true({ value: "v" });
    assert.equal(p.status, "pending");
    const sub = h.approval.submissions.find((s) => s.actionId === p.actionId)!;
    assert.match(sub.description.classifiedBy, /readOnlyHint="true"/);
  } finally {
    b.close();
  }
});

test("a tool without annotations is an action that is never auto-approvable", async () => {
  const b = openBinding(h.client, "ODD", "mcp://odd");
  try {
    const p = await b.stub.no_annotations({ value: "v" });
    const sub = h.approval.submissions.find((s) => s.actionId === p.actionId)!;
    assert.equal(sub.description.autoApprovable, false);
    const f = await b.stub.favourable({ value: "v" });
    assert.equal(
      h.approval.submissions.find((s) => s.actionId === f.actionId)!.description.autoApprovable,
      true,
    );
  } finally {
    b.close();
  }
});

test("a read that returns isError rejects with the tool text and records nothing", async () => {
  const b = openBinding(h.client, "ODD", "mcp://odd");
  try {
    const n = h.approval.observationCalls.length;
    await rejects(b.stub.always_fails({ value: "v" }), /boom: always fails/);
    assert.equal(h.approval.observationCalls.length, n);
  } finally {
    b.close();
  }
});

test("the generated .d.ts compiles with tsc, is usable, and resists comment/tsType injection", async () => {
  const odd = await resolveUrl("mcp://odd");
  const mem = await resolveUrl("mcp://memory");
  assert.doesNotMatch(odd.dts, /declare const injected/);
  assert.doesNotMatch(odd.dts, /Closes \*\//);
  writeFileSync(join(tmp.dir, "odd.d.ts"), odd.dts);
  writeFileSync(join(tmp.dir, "memory.d.ts"), mem.dts);
  writeFileSync(
    join(tmp.dir, "use.ts"),
    `declare const env: { ODD: ODD; MEMORY: MEMORY };
export async function run(): Promise<number> {
  const g = await env.MEMORY.read_graph();
  const text: string | undefined = g.content[0]?.text;
  const p = await env.MEMORY.create_entities({ entities: [{ name: "a", entityType: "t", observations: [] }] });
  const r = await env.MEMORY.getActionResult(p.actionId);
  const s: "pending" | "applied" | "rejected" | "failed" = r.status;
  await env.ODD.evil_doc({ value: "x" });
  // @ts-expect-error a tool outside the interface does not exist
  await env.MEMORY.format_disk();
  // @ts-expect-error arguments are typed from the JSON Schema
  await env.MEMORY.create_entities({ entities: [{ name: 1 }] });
  return (text?.length ?? 0) + s.length + (typeof injected === "undefined" ? 0 : 1);
}
declare const injected: unknown;
`,
  );
  const tsc = resolve(import.meta.dirname, "../../../node_modules/typescript/bin/tsc");
  try {
    execFileSync(
      process.execPath,
      [
        tsc,
        "--noEmit",
        "--strict",
        "--target",
        "ES2022",
        "--lib",
        "ES2022",
        "odd.d.ts",
        "memory.d.ts",
        "use.ts",
      ],
      { cwd: tmp.dir, stdio: "pipe" },
    );
  } catch (err) {
    assert.fail(`generated d.ts does not compile:\n${(err as { stdout: Buffer }).stdout.toString()}`);
  }
});

test("ResolveResource publishes one action kind per action tool, auto-approvable or with why not; reads are not kinds", async () => {
  const res = await resolveUrl("mcp://odd");
  const kinds = new Map((res.actionKinds?.kinds ?? []).map((k) => [k.tag, k]));
  assert.deepEqual(
    [...kinds.keys()],
    ["mcp.tool.string_true", "mcp.tool.no_annotations", "mcp.tool.favourable"],
  );
  assert.equal(kinds.get("mcp.tool.favourable")?.autoApprovable, true);
  assert.equal(kinds.get("mcp.tool.favourable")?.notAutoApprovableReason, "");
  const none = kinds.get("mcp.tool.no_annotations");
  assert.equal(none?.autoApprovable, false);
  assert.match(
    none?.notAutoApprovableReason ?? "",
    /destructiveHint absent \(must be false\).*idempotentHint absent \(must be true\)/,
  );
  // A scope that permits only reads publishes an empty list (not "unknown").
  const reads = await resolveUrl("mcp://odd#tool=always_fails");
  assert.deepEqual(reads.actionKinds, { kinds: [] });
});

test('tools named so no sandbox can call them ("two words", "café", "then") get no method and no type; the others still do', async () => {
  const res = await resolveUrl("mcp://odd");
  for (const name of ["two words", "caf\u00e9", "then"]) {
    assert.ok(!res.methods.includes(name), `${name} is not a method`);
    assert.ok(!res.dts.includes(JSON.stringify(name)), `${name} is not in the .d.ts`);
  }
  assert.ok(res.methods.includes("string_true") && res.methods.includes("evil_doc"));
});
