/**
 * Granted method names as MCP servers name their tools: `get-env`, `files.read`, `ns/tool` are
 * callable from a snippet (env.EV["get-env"](...)), and a name that cannot be one (a space, "then",
 * an Object.prototype member, longer than 128) is refused naming the binding and the method.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { RpcTarget } from "capnweb";
import type { SandboxRunnerHandle } from "../src/index.ts";
import { validateStart } from "../src/validate.ts";
import { returned } from "./escape/harness.ts";
import { MODES, run, startTestRunner } from "./helpers.ts";

/** A binding whose tools are named the way MCP servers name theirs. */
class ToolNames extends RpcTarget {
  readonly calls: string[] = [];
  "get-env"(key: string): string {
    this.calls.push(`get-env:${key}`);
    return `value of ${key}`;
  }
  "files.read"(path: string): string {
    this.calls.push(`files.read:${path}`);
    return `content of ${path}`;
  }
}

/** A start message granting binding EV the given methods. */
function startWith(methods: string[]) {
  return {
    executionId: "e1",
    workspaceId: "ws",
    code: "export default () => 1",
    bindings: [{ name: "EV", methods }],
    limits: undefined,
  };
}

test("method names with '-', '.', '/' and up to 128 visible ASCII characters are granted as they are", () => {
  const names = ["get-env", "files.read", "ns/tool", "a".repeat(128), "toggle-simulated-logging"];
  assert.deepEqual(validateStart(startWith(names)).bindings[0]?.methods, names);
});

test("a method name with a space, a control or non-ASCII character, 'then', a prototype member or over 128 characters is refused naming binding and method", () => {
  for (const bad of [
    "get env",
    "tab\there",
    "caf\u00e9",
    "",
    "then",
    "constructor",
    "__proto__",
    "a".repeat(129),
  ]) {
    assert.throws(
      () => validateStart(startWith(["ok", bad])),
      (e: Error) =>
        e.message.startsWith("start.bindings[0].methods[1] (binding EV, method ") &&
        /use 1-128 visible ASCII characters/.test(e.message),
      JSON.stringify(bad),
    );
  }
});

for (const mode of MODES) {
  describe(`MCP-style method names in a snippet (sandbox: ${mode})`, () => {
    let runner: SandboxRunnerHandle;
    before(async () => {
      runner = await startTestRunner(mode);
    });
    after(async () => {
      await runner.close();
    });

    test('env.EV["get-env"] and env.EV["files.read"] reach the binding', async () => {
      const ev = new ToolNames();
      const r = await run(
        runner,
        `export default async (env: any) => [await env.EV["get-env"]("HOME"), await env.EV["files.read"]("a.md")]`,
        { EV: { main: ev, methods: ["get-env", "files.read"] } },
      );
      assert.deepEqual(returned(r), ["value of HOME", "content of a.md"]);
      assert.deepEqual(ev.calls, ["get-env:HOME", "files.read:a.md"]);
    });
  });
}
