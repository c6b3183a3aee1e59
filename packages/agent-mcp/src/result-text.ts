/**
 * What an agent reads back from the tools: an ExecuteResult or a Turn as text (for the model) and
 * as structured content (matching the tools' output schemas). Pure functions, no I/O.
 */
import type { ExecuteResult, Turn } from "@gatehouse/proto";
import { MAX_TIMEOUT_SECONDS } from "./limits.ts";

/** `execute_code`'s structured content (see `executeCodeOutput` in tools/execute-code.ts). */
export interface ExecuteCodeContent {
  ok: boolean;
  executionId: string;
  durationMs: number;
  /** The value the default export resolved to (parsed JSON); absent for undefined. */
  returnValue?: unknown;
  console: { level: string; text: string }[];
  outputTruncated: boolean;
  error?: { name: string; message: string; line: number; column: number };
  /** Reads recorded in the workspace log, each before its data reached the snippet. */
  observed: { id: number; binding: string; title: string }[];
  /** Writes submitted for approval, in submission order. */
  submitted: { actionId: number; binding: string; title: string; awaited: boolean }[];
  /** Set when awaited writes suspended the turn: pass it to wait_for_decisions. */
  turnId?: string;
  warnings: string[];
  /**
   * Set (true) when the return value is larger than {@link LARGE_RETURN_BYTES}: it is sent once,
   * as the JSON text of the result's last content block, and `returnValue` is absent.
   */
  returnValueInContent?: boolean;
}

/**
 * A return value larger than this (bytes of UTF-8 JSON) is sent once in an execute_code result
 * (see {@link executeCodeResult}); smaller ones are in both the text and `structuredContent`.
 */
export const LARGE_RETURN_BYTES = 16 * 1024;

/** Whether `r`'s return value is sent once: the snippet succeeded and its JSON is large. */
export function returnValueSentOnce(r: ExecuteResult): boolean {
  return r.ok && Buffer.byteLength(r.returnJson, "utf8") > LARGE_RETURN_BYTES;
}

/** `wait_for_decisions`' structured content. */
export interface TurnContent {
  turnId: string;
  /** "suspended" (still waiting), "resumed" (every awaited write applied) or "completed" (one did not). */
  state: string;
  stillWaiting: boolean;
  awaitedActionIds: number[];
  /** One per awaited action once the turn resumed or completed. */
  results: { actionId: number; status: string; result?: unknown; reason: string }[];
  reason: string;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * What an agent can do about a limit error, replacing the sandbox's hint for an operator ("raise
 * the limit", which an agent cannot): the wall time is the agent's `timeout_seconds`, the heap is
 * fixed by the deployment. Other messages are returned unchanged.
 */
export function agentErrorMessage(name: string, message: string): string {
  const hint =
    name === "TimeoutError"
      ? `do less per execution, or pass execute_code a larger timeout_seconds (at most ${MAX_TIMEOUT_SECONDS})`
      : name === "HeapLimitError"
        ? "use less memory (work on less data at once); the heap limit is fixed by the deployment"
        : undefined;
  if (!hint) return message;
  return `${message.replace(/;[^;]*raise the limit\s*$/, "")}; ${hint}`;
}

/**
 * The structured form of an execution's result. With `returnValueInContent` the return value is
 * left out (`returnValueInContent: true` says where it is; see {@link executeCodeResult}).
 */
export function executeCodeContent(
  r: ExecuteResult,
  options: { returnValueInContent?: boolean } = {},
): ExecuteCodeContent {
  const content: ExecuteCodeContent = {
    ok: r.ok,
    executionId: r.executionId,
    durationMs: r.durationMs,
    console: r.console.map((l) => ({ level: l.level, text: l.text })),
    outputTruncated: r.outputTruncated,
    observed: r.observed.map((o) => ({ id: o.id, binding: o.binding, title: o.title })),
    submitted: r.submitted.map((a) => ({
      actionId: a.actionId,
      binding: a.binding,
      title: a.title,
      awaited: a.awaited,
    })),
    warnings: [...r.warnings],
  };
  if (options.returnValueInContent) content.returnValueInContent = true;
  else if (r.ok && r.returnJson) content.returnValue = parseJson(r.returnJson);
  if (!r.ok && r.error) {
    const { name, message, line, column } = r.error;
    content.error = { name, message: agentErrorMessage(name, message), line, column };
  }
  if (r.turnId) content.turnId = r.turnId;
  return content;
}

/** Reads listed one per line in the text; the rest are summed up (structuredContent has them all). */
export const LISTED_READS = 20;

/** "SyntaxError: Unexpected token (line 3:7)". */
function errorLine(e: NonNullable<ExecuteResult["error"]>): string {
  const where = e.line ? ` (line ${e.line}${e.column ? `:${e.column}` : ""} of the snippet)` : "";
  return `${e.name || "Error"}: ${agentErrorMessage(e.name, e.message)}${where}`;
}

/**
 * The text an agent reads after `execute_code`: outcome, console output, return value or error
 * with its line, the reads recorded, the writes submitted (each saying how it behaves), and for
 * awaited writes the turn id and the call to make next. With `returnValueBelow` the return value
 * is not in this text but said to follow in the next content block (see {@link executeCodeResult}).
 */
export function executeResultText(r: ExecuteResult, options: { returnValueBelow?: boolean } = {}): string {
  const lines: string[] = [];
  for (const w of r.warnings) lines.push(`WARNING: ${w}`);
  lines.push(
    r.ok
      ? `The snippet finished in ${r.durationMs} ms (execution ${r.executionId}).`
      : `The snippet failed after ${r.durationMs} ms (execution ${r.executionId}): ${r.error ? errorLine(r.error) : "unknown error"}`,
  );
  if (r.console.length > 0 || r.outputTruncated) {
    lines.push("", "Console output:");
    for (const l of r.console) lines.push(l.level === "log" ? l.text : `[${l.level}] ${l.text}`);
    if (r.outputTruncated) lines.push("[output truncated at the output limit]");
  }
  if (r.ok && options.returnValueBelow) {
    const bytes = Buffer.byteLength(r.returnJson, "utf8");
    lines.push(
      "",
      `Returned: ${bytes} bytes of JSON, the next content block (sent once, not repeated here).`,
    );
  } else if (r.ok) lines.push("", `Returned: ${r.returnJson || "undefined"}`);
  if (r.observed.length > 0) {
    lines.push("", `Reads recorded in the workspace log (${r.observed.length}):`);
    for (const o of r.observed.slice(0, LISTED_READS)) lines.push(`  #${o.id} ${o.binding}: ${o.title}`);
    const rest = r.observed.slice(LISTED_READS);
    if (rest.length > 0) {
      lines.push(
        `  … and ${rest.length} more (log ids ${rest[0]?.id} to ${rest.at(-1)?.id}; all in structuredContent.observed)`,
      );
    }
  }
  if (r.submitted.length > 0) {
    lines.push(
      "",
      `Writes submitted for approval (${r.submitted.length}; nothing reaches a system until a person approves):`,
    );
    for (const a of r.submitted) {
      const how = a.awaited
        ? "awaited: applied only once a person approves it"
        : "simulated: later reads already show it; applied once a person approves it";
      lines.push(`  action ${a.actionId} ${a.binding}: ${a.title} — ${how}`);
    }
  }
  if (r.turnId) {
    lines.push(
      "",
      `This turn (turn_id ${r.turnId}) is suspended until a person decides the awaited writes. ` +
        `Call wait_for_decisions with turn_id "${r.turnId}" to learn each one's outcome and result; ` +
        "until then, do not repeat those writes.",
    );
  }
  return lines.join("\n");
}

/** The structured form of a turn; `stillWaiting` when it is still suspended. */
export function turnContent(t: Turn): TurnContent {
  return {
    turnId: t.turnId,
    state: t.state,
    stillWaiting: t.state === "suspended",
    awaitedActionIds: [...t.awaitedActionIds],
    results: t.results.map((r) => {
      const out: TurnContent["results"][number] = {
        actionId: r.actionId,
        status: r.status,
        reason: r.reason,
      };
      if (r.resultJson) out.result = parseJson(r.resultJson);
      return out;
    }),
    reason: t.reason,
  };
}

/**
 * The text an agent reads after `wait_for_decisions`: resumed with every result, completed with
 * the reason and each outcome, or still waiting after `waitedSeconds` with the call to make again.
 */
export function turnResultText(t: Turn, waitedSeconds: number): string {
  const ids = t.awaitedActionIds.join(", ");
  if (t.state === "suspended") {
    return (
      `Still waiting after ${waitedSeconds} s: a person has not yet decided every awaited write of turn ${t.turnId} (actions ${ids}). ` +
      `Call wait_for_decisions again with turn_id "${t.turnId}" to keep waiting.`
    );
  }
  const head =
    t.state === "resumed"
      ? `Turn ${t.turnId} resumed: every awaited write (actions ${ids}) was approved and applied.`
      : `Turn ${t.turnId} completed without resuming: ${t.reason || "not every awaited write was applied"}.`;
  const byId = new Map(t.results.map((r) => [r.actionId, r]));
  const rows = t.awaitedActionIds.map((id) => {
    const r = byId.get(id);
    if (!r) return `  action ${id}: no result recorded`;
    const why = r.reason ? ` — ${r.reason}` : "";
    const result = r.resultJson ? `\n    result: ${r.resultJson}` : "";
    return `  action ${id}: ${r.status}${why}${result}`;
  });
  return [head, ...rows].join("\n");
}

/** An `execute_code` tool result (the SDK's CallToolResult shape, without importing the SDK here). */
export interface ExecuteCodeResult {
  /** The text for the model; a second block with the return value's JSON when it is sent once. */
  content: { type: "text"; text: string }[];
  structuredContent: ExecuteCodeContent;
  isError: boolean;
}

/**
 * The `execute_code` result for `r`, carrying a large return value once.
 *
 * execute_code declares an outputSchema, so the MCP spec requires `structuredContent` matching it
 * in every successful result; the spec also says a tool returning structured content SHOULD return
 * it serialized in a TextContent block for clients that read only `content` — and many do: hosts
 * that hand the model only `content` (some ignore `structuredContent` altogether). Sending the
 * return value in both doubled the largest part of a result. The rule:
 * - up to {@link LARGE_RETURN_BYTES} of return value JSON: as before, the summary text (with
 *   `Returned: <json>`) and `structuredContent.returnValue`;
 * - larger: the value is sent once, where every client finds it: the summary text says the value
 *   follows, a second text block holds exactly its JSON (parseable as is), and `structuredContent`
 *   leaves the optional `returnValue` out and sets `returnValueInContent: true` instead, so it still
 *   matches the schema and a program reading it knows where the value is.
 * Keeping it in `content` rather than only in `structuredContent` is what keeps a model behind a
 * content-only client able to read what its snippet returned.
 */
export function executeCodeResult(r: ExecuteResult): ExecuteCodeResult {
  const once = returnValueSentOnce(r);
  const content: ExecuteCodeResult["content"] = [
    { type: "text", text: executeResultText(r, { returnValueBelow: once }) },
  ];
  if (once) content.push({ type: "text", text: r.returnJson });
  return {
    content,
    structuredContent: executeCodeContent(r, { returnValueInContent: once }),
    isError: !r.ok,
  };
}
