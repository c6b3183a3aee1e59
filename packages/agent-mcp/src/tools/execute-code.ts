/**
 * `execute_code`: runs a TypeScript snippet `export default async (env) => {…}` in the workspace's
 * sandbox through Kernel.ExecuteCode, stamped caller `{kind: "agent", id: chatId}`. Its
 * description is the workspace's whole `env` `.d.ts` (DescribeBindings' env_dts, read at each
 * `tools/list`) and how writes behave.
 */
import { z } from "zod";
import { describeBindings, executeCode } from "../kernel-calls.ts";
import { kernelErrorText } from "../kernel-errors.ts";
import { DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS } from "../limits.ts";
import { executeCodeResult, LARGE_RETURN_BYTES } from "../result-text.ts";
import { type AgentTool, toolError } from "../tool-registry.ts";

/** Largest snippet accepted, bytes of UTF-8: the kernel's own limit (ExecuteCode refuses larger). */
export const MAX_SNIPPET_BYTES = 512 * 1024;
export { DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS };

const input = z.object({
  code: z
    .string()
    .describe(
      "A TypeScript module whose default export is an async function of env: `export default async (env: Env) => { ...; return value; }`",
    ),
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_TIMEOUT_SECONDS)
    .optional()
    .describe(
      `Wall-time limit in seconds (default ${DEFAULT_TIMEOUT_SECONDS}, at most ${MAX_TIMEOUT_SECONDS})`,
    ),
});

/** The shape of `structuredContent` (ExecuteCodeContent in result-text.ts). */
export const executeCodeOutput = z.object({
  ok: z
    .boolean()
    .describe("false when the snippet did not compile, had no default export, threw or timed out"),
  executionId: z.string(),
  durationMs: z.number().describe("milliseconds"),
  returnValue: z
    .unknown()
    .optional()
    .describe(`the value the default export resolved to (JSON); absent when returnValueInContent is set`),
  returnValueInContent: z
    .boolean()
    .optional()
    .describe(
      `true when the return value is over ${LARGE_RETURN_BYTES} bytes of JSON: it is sent once, as the JSON text of the last content block, and returnValue is absent`,
    ),
  console: z.array(z.object({ level: z.string(), text: z.string() })),
  outputTruncated: z.boolean(),
  error: z
    .object({
      name: z.string(),
      message: z.string(),
      line: z.number().describe("1-based line in the snippet; 0 when unknown"),
      column: z.number(),
    })
    .optional(),
  observed: z
    .array(z.object({ id: z.number(), binding: z.string(), title: z.string() }))
    .describe("reads recorded in the workspace log (log ids), each before its data reached the snippet"),
  submitted: z
    .array(
      z.object({
        actionId: z.number(),
        binding: z.string(),
        title: z.string(),
        awaited: z.boolean().describe("true: the turn waits for a person's decision; false: simulated"),
      }),
    )
    .describe("writes submitted for approval, in submission order"),
  turnId: z
    .string()
    .optional()
    .describe("set when awaited writes suspended the turn: pass it to wait_for_decisions"),
  warnings: z.array(z.string()),
});

const NO_BINDINGS =
  "This workspace has no bindings yet, so `env` is empty; a person adds one with `gatehouse connect` " +
  "(this tool's description is re-sent when that happens).";

/** execute_code's description: how to write a snippet, how reads and writes behave, the env `.d.ts`. */
export function executeCodeDescription(envDts: string, bindingCount: number): string {
  return [
    "Run a TypeScript snippet in Gatehouse's sandbox against this workspace's systems. The snippet is a module",
    "whose default export is an async function of `env`: `export default async (env: Env) => { ...; return value; }`.",
    "It has no network, no fetch, require, process or timers: it reaches systems only through the bindings in `env`,",
    `declared below. You get back console output, the returned value (JSON) and errors with their line; wall time`,
    `${DEFAULT_TIMEOUT_SECONDS} s unless you pass timeout_seconds (at most ${MAX_TIMEOUT_SECONDS}); snippets up to ${MAX_SNIPPET_BYTES / 1024} KiB.`,
    "",
    "Reads are recorded in the workspace's log (observations) before their data reaches you. Writes never reach a",
    "system until a person approves them, later, often in a batch; the result lists every write you submitted:",
    '- simulated writes (git commit, createBranch, push) return at once with provisional ids such as "~1"; your later',
    "  reads, in this and later snippets, already show them while they wait for a person.",
    '- awaited writes (MCP tools that are not read-only) return {status: "pending", actionId} and suspend the turn:',
    "  the result names the turn; call wait_for_decisions with its turn_id to learn each write's outcome and result.",
    "  Pass {dependsOn: [actionId]} as a write's second argument when it needs an earlier write; if that one is",
    "  rejected, the dependent is rejected too. An MCP binding's getActionResult(actionId) reports a write's state.",
    "",
    bindingCount === 0 ? NO_BINDINGS : "The workspace's `env` (TypeScript declarations):",
    "```ts",
    envDts.trimEnd(),
    "```",
  ].join("\n");
}

export const executeCodeTool: AgentTool<typeof input> = {
  name: "execute_code",
  input,
  output: executeCodeOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async listing(ctx) {
    const described = await describeBindings(ctx.kernel, ctx.workspaceId);
    return {
      title: "Run code against the workspace's systems",
      description: executeCodeDescription(described.envDts, described.bindings.length),
    };
  },
  async call({ code, timeout_seconds }, ctx, extra) {
    if (!code.trim()) {
      return toolError("code is empty; pass a TypeScript module `export default async (env) => { ... }`");
    }
    const bytes = Buffer.byteLength(code, "utf8");
    if (bytes > MAX_SNIPPET_BYTES) {
      return toolError(
        `code is ${bytes} bytes; execute_code accepts snippets up to ${MAX_SNIPPET_BYTES} bytes (${MAX_SNIPPET_BYTES / 1024} KiB). ` +
          "Send a smaller snippet: do the work in steps, or read large data through env instead of inlining it.",
      );
    }
    const wallTimeMs = (timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
    let result: Awaited<ReturnType<typeof executeCode>>;
    try {
      result = await executeCode(
        ctx.kernel,
        {
          workspaceId: ctx.workspaceId,
          code,
          caller: { kind: "agent", id: ctx.chatId },
          limits: { wallTimeMs, heapMb: 0, outputBytes: 0 },
          executionId: "",
        },
        wallTimeMs,
        extra.signal,
      );
    } catch (err) {
      return toolError(kernelErrorText(err, "execute_code"));
    }
    // A large return value is sent once (executeCodeResult says where and why).
    const out = executeCodeResult(result);
    return { ...out, structuredContent: out.structuredContent as unknown as Record<string, unknown> };
  },
};
