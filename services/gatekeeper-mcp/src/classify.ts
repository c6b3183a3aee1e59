/**
 * Read/action classification of MCP tools from their annotations (MCP specification, "Tools" >
 * "Tool annotations": readOnlyHint, destructiveHint, idempotentHint are HINTS from the server and
 * untrusted; clients must not make security decisions on them alone). Gatehouse's rule (docs/architecture.md
 * "The approval contract"):
 *
 * - a read only if `annotations.readOnlyHint === true` (strictly the boolean; the string "true",
 *   1, or an absent hint make it an action);
 * - every action is delivered AWAIT (no simulation for MCP);
 * - auto-approvable only if the endpoint is admin-vetted AND `destructiveHint === false` AND
 *   `idempotentHint === true`.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/** Outcome of classifying one tool on one endpoint. */
export interface ToolClassification {
  kind: "read" | "action";
  /** Only meaningful for actions; always false for reads. */
  autoApprovable: boolean;
  /** Why, for the action log, e.g. "annotations.readOnlyHint absent; endpoint byo". */
  classifiedBy: string;
  /** `{tag: "mcp.tool.<name>", label}`: the auto-approval rule key. */
  actionKind: { tag: string; label: string };
  /**
   * For an action that is not auto-approvable: why no rule can ever approve it, each unmet
   * condition with what it must be, e.g. "endpoint byo (...); annotations.destructiveHint absent
   * (must be false)". Empty for reads and auto-approvable actions.
   */
  notAutoApprovableReason: string;
}

function describeHint(annotations: Record<string, unknown> | undefined, hint: string): string {
  if (!annotations || !(hint in annotations)) return `annotations.${hint} absent`;
  return `annotations.${hint}=${JSON.stringify(annotations[hint])}`;
}

/** "create_entities" -> "Create entities"; "get-sum" -> "Get sum". */
export function toolLabel(name: string): string {
  const words = name.replace(/[_\-.]+/g, " ").trim();
  return words === "" ? name : words[0]!.toUpperCase() + words.slice(1);
}

/**
 * Classifies `tool` for an endpoint whose trust is `vetted` (true) or byo (false).
 * Pure; never throws.
 */
export function classifyTool(
  tool: Pick<Tool, "name" | "annotations">,
  endpointVetted: boolean,
): ToolClassification {
  const a = tool.annotations as Record<string, unknown> | undefined;
  const actionKind = {
    tag: `mcp.tool.${tool.name.toLowerCase().replace(/\s+/g, "_")}`,
    label: toolLabel(tool.name),
  };
  const ro = describeHint(a, "readOnlyHint");
  if (a?.readOnlyHint === true) {
    return { kind: "read", autoApprovable: false, classifiedBy: ro, actionKind, notAutoApprovableReason: "" };
  }
  const reasons = [
    ro,
    describeHint(a, "destructiveHint"),
    describeHint(a, "idempotentHint"),
    `endpoint ${endpointVetted ? "vetted" : "byo"}`,
  ];
  const unmet = [
    ...(endpointVetted ? [] : ["endpoint byo (only tools of an endpoint an administrator vetted can be)"]),
    ...(a?.destructiveHint === false ? [] : [`${describeHint(a, "destructiveHint")} (must be false)`]),
    ...(a?.idempotentHint === true ? [] : [`${describeHint(a, "idempotentHint")} (must be true)`]),
  ];
  const autoApprovable = unmet.length === 0;
  return {
    kind: "action",
    autoApprovable,
    classifiedBy: `${reasons.join("; ")} -> action${autoApprovable ? ", auto-approvable" : ""}`,
    actionKind,
    notAutoApprovableReason: unmet.join("; "),
  };
}
