import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ExecuteClientMessage, SandboxRunnerClient } from "@gatehouse/proto";
import { credentials, status } from "@grpc/grpc-js";
import { executeSnippet } from "../src/client.ts";
import type { SandboxRunnerHandle } from "../src/index.ts";
import { startTestRunner } from "./helpers.ts";

/** Sends `messages` on a fresh Execute stream and returns the gRPC error it ends with. */
function callExpectingError(
  port: number,
  messages: ExecuteClientMessage[],
): Promise<{ code: number; details: string }> {
  const client = new SandboxRunnerClient(`127.0.0.1:${port}`, credentials.createInsecure());
  const call = client.execute();
  return new Promise((resolve, reject) => {
    call.on("data", () => undefined);
    call.on("error", (e: { code: number; details: string }) => {
      client.close();
      resolve(e);
    });
    call.on("end", () => {
      client.close();
      reject(new Error("stream ended without an error"));
    });
    for (const m of messages) call.write(m);
  });
}

const start = (
  over: Partial<{ executionId: string; code: string; bindings: { name: string; methods: string[] }[] }>,
) => ({
  msg: {
    $case: "start" as const,
    start: {
      executionId: "p-1",
      workspaceId: "ws-protocol",
      code: "export default async () => 1",
      bindings: [],
      limits: undefined,
      ...over,
    },
  },
});

describe("Execute stream contract", () => {
  let runner: SandboxRunnerHandle;
  before(async () => {
    runner = await startTestRunner("none");
  });
  after(async () => {
    await runner.close();
  });

  test("a frame before start ends the call with INVALID_ARGUMENT naming start", async () => {
    const e = await callExpectingError(runner.port, [
      { msg: { $case: "frame", frame: { binding: "A", data: "[]" } } },
    ]);
    assert.equal(e.code, status.INVALID_ARGUMENT);
    assert.match(e.details, /first message must be `start`/);
  });

  test("a binding name that is not an identifier, or __proto__, is refused naming the field", async () => {
    for (const name of ["not-valid", "__proto__", "toString"]) {
      const e = await callExpectingError(runner.port, [start({ bindings: [{ name, methods: [] }] })]);
      assert.equal(e.code, status.INVALID_ARGUMENT);
      assert.match(e.details, /start\.bindings\[0\]\.name/);
    }
  });

  test("limits above their maximum are refused naming the limit", async () => {
    await assert.rejects(
      executeSnippet(`127.0.0.1:${runner.port}`, {
        executionId: "p-2",
        workspaceId: "ws-test",
        code: "export default () => 1",
        limits: { heapMb: 100_000 },
      }),
      (e: { code: number; details: string }) =>
        e.code === status.INVALID_ARGUMENT && /limits\.heap_mb/.test(e.details),
    );
  });

  test("a snippet without a default export function gets a SnippetShapeError", async () => {
    const r = await executeSnippet(`127.0.0.1:${runner.port}`, {
      executionId: "p-3",
      workspaceId: "ws-test",
      code: "export const x = 1;",
    });
    assert.equal(r.ok, false);
    assert.equal(r.error?.name, "SnippetShapeError");
  });

  test("metrics count executions and kills by reason", async () => {
    await executeSnippet(`127.0.0.1:${runner.port}`, {
      executionId: "p-4",
      workspaceId: "ws-test",
      code: "export default async () => { for (;;) {} }",
      limits: { wallTimeMs: 200 },
    });
    const text = await runner.metrics.registry.metrics();
    assert.match(text, /gatehouse_sandbox_kills_total\{reason="timeout"\} [1-9]/);
    assert.match(
      text,
      /gatehouse_sandbox_execution_seconds_count\{outcome="error",sandbox="none",start="(warm|cold)"\} [1-9]/,
    );
  });
});
