/**
 * What one binding's methods do, independent of the capnweb wiring (docs/architecture.md "The approval contract"):
 *
 * - read(tool, args): validate -> call the tool -> on failure return the error and record NOTHING
 *   -> AuthorizeObservation (caller token) -> only then return the CallToolResult.
 * - write(tool, args, {dependsOn}): validate -> build the approver description from the staged
 *   payload -> SubmitAction (fresh uuid localId, payloadJson {tool, arguments}) -> `{status:
 *   "pending", actionId}`. The tool itself is NOT called (delivery AWAIT). For a file write of a
 *   filesystem server the gatekeeper first reads the current state through the server's read
 *   tools (and edit_file's dryRun) ONLY to describe the action (diff, risks, pre-flight warnings;
 *   file-facts.ts): those reads are not observations, reach no caller, and never fail the write.
 * - getActionResult(id): GetActionForCaller -> status; an applied result is recorded as an
 *   observation before it is returned.
 */

import { randomUUID } from "node:crypto";
import type { ApprovalQueue } from "@gatehouse/gatekeeper-kit";
import { codeSpan, oneLine, truncateUtf8 } from "@gatehouse/gatekeeper-kit";
import { ActionStatus, Delivery } from "@gatehouse/proto";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { validateArguments } from "./arg-validation.ts";
import { type Catalog, permittedTool } from "./catalog.ts";
import type { ConnectionPool } from "./connections.ts";
import { DEFAULT_BUDGET, describeRead, describeToolCall } from "./describe.ts";
import { ArgumentsInvalid, GatekeeperError, ToolFailed, UnknownAction } from "./errors.ts";
import { describeFileCall, type FileFacts } from "./file-facts.ts";
import type { ResolvedResource } from "./resource-url.ts";
import { reviewFacts } from "./review-facts.ts";
import { callErrorMessage } from "./transport-faults.ts";

/** Who is calling, from the session's `open` message. The token is never logged or returned. */
export interface SessionContext {
  workspaceId: string;
  binding: string;
  executionId: string;
  callerToken: string;
  resource: ResolvedResource;
}

/** Handle returned by a write. */
export interface PendingAction {
  status: "pending";
  actionId: number;
}

/** What `getActionResult` returns. `result` only when applied; `reason` when rejected/failed. */
export interface ActionResultView {
  status: "pending" | "applied" | "rejected" | "failed";
  reason?: string;
  result?: unknown;
}

/** Payload staged with SubmitAction and replayed by ApplyAction. */
export interface StagedPayload {
  tool: string;
  arguments: Record<string, unknown>;
}

const MAX_ERROR_BYTES = 2048;
/** Deadline of the describe-reads of one staged write (file-facts.ts), in milliseconds. */
export const DESCRIBE_TIMEOUT_MS = 2000;

/** The text of a tool result's text content blocks, bounded; used as the failure message. */
export function toolErrorText(result: CallToolResult): string {
  const text = (result.content ?? [])
    .filter((c): c is { type: "text"; text: string } => c.type === "text" && typeof c.text === "string")
    .map((c) => c.text)
    .join("\n");
  const { text: bounded, cut } = truncateUtf8(text || "(the tool gave no error text)", MAX_ERROR_BYTES);
  return cut ? `${bounded} …` : bounded;
}

/** True when `v` is made only of JSON values (no stubs, functions, class instances, cycles). */
function isPlainJson(v: unknown, depth = 0): boolean {
  if (depth > 100) return false;
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every((x) => isPlainJson(x, depth + 1));
  if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.values(v as object).every((x) => isPlainJson(x, depth + 1));
  }
  return false;
}

function plainArgs(tool: string, args: unknown): Record<string, unknown> {
  const a = args === undefined ? {} : args;
  if (!isPlainJson(a) || typeof a !== "object" || a === null || Array.isArray(a)) {
    throw new ArgumentsInvalid(
      `arguments of ${tool} must be a plain JSON object (no functions, stubs or class instances)`,
    );
  }
  return a as Record<string, unknown>;
}

/** The per-session implementation behind a binding's capnweb methods. */
export class BindingService {
  readonly #ctx: SessionContext;
  readonly #catalog: Catalog;
  readonly #pool: ConnectionPool;
  readonly #approval: ApprovalQueue;
  readonly #logger: Logger;
  /** actionId -> localId for actions submitted in this session (for dependsOn). */
  readonly #localIds = new Map<number, string>();
  /** actionId -> path of this session's pending create_directory actions (pre-flight warnings). */
  readonly #pendingDirs = new Map<number, string>();
  readonly #describeTimeoutMs: number;

  constructor(
    ctx: SessionContext,
    catalog: Catalog,
    pool: ConnectionPool,
    approval: ApprovalQueue,
    logger: Logger,
    describeTimeoutMs = DESCRIBE_TIMEOUT_MS,
  ) {
    this.#describeTimeoutMs = describeTimeoutMs;
    this.#ctx = ctx;
    this.#catalog = catalog;
    this.#pool = pool;
    this.#approval = approval;
    this.#logger = logger.child({ component: "binding", binding: ctx.binding, workspaceId: ctx.workspaceId });
  }

  #restricted(tool: string): boolean {
    return this.#ctx.resource.restricted || this.#ctx.resource.restrictedTools.has(tool);
  }

  /**
   * Performs a read. @throws ScopeViolation, ArgumentsInvalid, ToolFailed (nothing recorded),
   * ServerUnavailable, ApprovalRefused (data withheld).
   */
  async read(tool: string, rawArgs: unknown): Promise<CallToolResult> {
    const { resource } = this.#ctx;
    const entry = permittedTool(this.#catalog, tool, resource.serverName);
    const args = plainArgs(tool, rawArgs);
    validateArguments(tool, entry.tool.inputSchema as Record<string, unknown>, args);
    let result: CallToolResult;
    try {
      result = await this.#pool.callTool(resource, tool, args);
    } catch (err) {
      if (err instanceof GatekeeperError) throw err;
      // Names the endpoint and the cause ("fetch failed" alone says nothing).
      const { text } = truncateUtf8(callErrorMessage(`read ${tool}`, resource, err), MAX_ERROR_BYTES);
      this.#logger.info({ event: "read.failed", tool }, "read failed; nothing recorded");
      throw new ToolFailed(text);
    }
    if (result.isError === true) {
      this.#logger.info({ event: "read.failed", tool }, "read returned isError; nothing recorded");
      throw new ToolFailed(`read ${tool} failed: ${toolErrorText(result)}`);
    }
    const desc = describeRead(resource.serverName, tool, args);
    const observationId = await this.#approval.authorizeObservation(this.#ctx.callerToken, {
      title: desc.title,
      description: desc.description,
      containsRestrictedData: this.#restricted(tool),
      kind: entry.classification.actionKind.tag,
      page: 0,
    });
    this.#logger.info({ event: "read.recorded", tool, observationId }, "read recorded");
    return result;
  }

  /**
   * Stages a write for approval; the server is not called.
   * @throws ScopeViolation, ArgumentsInvalid, UnknownAction (dependsOn), ApprovalRefused.
   */
  async write(tool: string, rawArgs: unknown, options?: unknown): Promise<PendingAction> {
    const { resource } = this.#ctx;
    const entry = permittedTool(this.#catalog, tool, resource.serverName);
    const args = plainArgs(tool, rawArgs);
    validateArguments(tool, entry.tool.inputSchema as Record<string, unknown>, args);
    const dependsOn = this.#dependsOn(tool, options);
    const facts = reviewFacts(tool, args, entry.tool.annotations?.destructiveHint === true);
    const file = await this.#describeFile(tool, args);
    const call = describeToolCall(resource.serverName, tool, entry.tool.description, args, DEFAULT_BUDGET, {
      details: file?.details,
      blocks: file?.blocks,
    });
    const localId = randomUUID();
    const payload: StagedPayload = { tool, arguments: args };
    const c = entry.classification;
    const risks = file?.knowsDestructive
      ? [...file.risks, ...facts.risks.filter((r) => r.kind !== "destructive")]
      : [...(file?.risks ?? []), ...facts.risks];
    const actionId = await this.#approval.submitAction(
      this.#ctx.callerToken,
      localId,
      {
        title: call.title,
        description: call.description,
        descriptionIsComplete: call.descriptionIsComplete,
        delivery: Delivery.DELIVERY_AWAIT,
        dependsOn,
        implementsRevert: 0,
        autoApprovable: c.autoApprovable,
        actionKind: c.actionKind,
        classifiedBy: c.classifiedBy,
        // Writes go to the bound MCP server itself, not out of the workspace's systems.
        egress: false,
        summary: facts.summary,
        fields: facts.fields,
        risks,
        preflightWarnings: file?.preflightWarnings ?? [],
        preview: facts.preview,
      },
      JSON.stringify(payload),
    );
    this.#localIds.set(actionId, localId);
    if (tool === "create_directory" && typeof args.path === "string")
      this.#pendingDirs.set(actionId, args.path);
    this.#logger.info({ event: "action.submitted", tool, actionId }, "write staged for approval");
    return { status: "pending", actionId };
  }

  /**
   * Describe-reads of a file write (file-facts.ts) through the bound server, bounded by
   * DESCRIBE_TIMEOUT_MS; never recorded as observations, never returned to the caller, and never
   * failing the staging (null when the tool is not a file write or describing broke).
   */
  async #describeFile(tool: string, args: Record<string, unknown>): Promise<FileFacts | null> {
    try {
      return await describeFileCall({
        tool,
        args,
        tools: this.#catalog.tools,
        call: (t, a, timeoutMs) => this.#pool.callTool(this.#ctx.resource, t, a, timeoutMs),
        timeoutMs: this.#describeTimeoutMs,
        pendingDirs: this.#pendingDirs,
        readContent:
          !this.#restricted("read_text_file") &&
          !this.#restricted("read_file") &&
          !this.#restricted("edit_file"),
      });
    } catch {
      this.#logger.info({ event: "describe.failed", tool }, "describe-read failed; staged without it");
      return null;
    }
  }

  #dependsOn(tool: string, options: unknown): string[] {
    if (options === undefined || options === null) return [];
    if (typeof options !== "object" || Array.isArray(options) || !isPlainJson(options)) {
      throw new ArgumentsInvalid(`the second argument of ${tool} must be { dependsOn?: number[] }`);
    }
    const extra = Object.keys(options).filter((k) => k !== "dependsOn");
    if (extra.length > 0) {
      throw new ArgumentsInvalid(
        `the second argument of ${tool} has unknown option(s) ${extra.join(", ")}; only dependsOn is allowed`,
      );
    }
    const dep = (options as { dependsOn?: unknown }).dependsOn;
    if (dep === undefined) return [];
    if (!Array.isArray(dep) || !dep.every((d) => Number.isSafeInteger(d))) {
      throw new ArgumentsInvalid(
        "dependsOn must be an array of action ids (integers) from earlier pending handles",
      );
    }
    return [...new Set(dep as number[])].map((id) => {
      const localId = this.#localIds.get(id);
      if (localId === undefined) {
        throw new UnknownAction(
          `dependsOn names action ${id}, which this binding did not submit in this session; use actionId values from earlier pending handles`,
        );
      }
      return localId;
    });
  }

  /**
   * Status of an action this binding submitted. An applied result is recorded as an observation
   * before it is returned. @throws UnknownAction, ApprovalRefused.
   */
  async getActionResult(actionId: unknown): Promise<ActionResultView> {
    if (!Number.isSafeInteger(actionId) || (actionId as number) <= 0) {
      throw new UnknownAction("getActionResult needs the actionId (a positive integer) of a pending handle");
    }
    const id = actionId as number;
    const rec = await this.#approval.getActionForCaller(this.#ctx.callerToken, id);
    if (rec.binding !== "" && rec.binding !== this.#ctx.binding) {
      throw new UnknownAction(`action ${id} does not belong to binding ${this.#ctx.binding}`);
    }
    switch (rec.status) {
      case ActionStatus.ACTION_STATUS_APPLIED: {
        let result: unknown = null;
        try {
          result = rec.resultJson ? JSON.parse(rec.resultJson) : null;
        } catch {
          result = null;
        }
        const tag = rec.description?.actionKind?.tag ?? "mcp.tool";
        const tool = tag.startsWith("mcp.tool.") ? tag.slice("mcp.tool.".length) : tag;
        await this.#approval.authorizeObservation(this.#ctx.callerToken, {
          title: `Read the result of action ${id} on ${oneLine(this.#ctx.resource.serverName)}`,
          description: `Collected the result of applied action ${id} (${codeSpan(tag)}).`,
          containsRestrictedData: this.#restricted(tool),
          kind: `${tag}.result`,
          page: 0,
        });
        return { status: "applied", result };
      }
      case ActionStatus.ACTION_STATUS_REJECTED:
        return { status: "rejected", reason: rec.reason || "rejected" };
      case ActionStatus.ACTION_STATUS_FAILED:
        return { status: "failed", reason: rec.reason || "failed" };
      default:
        return { status: "pending" };
    }
  }
}
