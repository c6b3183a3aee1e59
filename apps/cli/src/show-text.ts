/** `gatehouse show`: one action's full description as terminal text. */
import type { ActionRecord } from "@gatehouse/proto";
import { statusName, terminalSafe } from "./output.ts";

/**
 * The full description of `action` as lines of text: summary, status, how it ended (who decided,
 * why it failed or was rejected, the cascade it came from, whether its outcome is unknown, the
 * applied result, cut to 300 code points), binding, execution (the
 * `gatehouse review --turn` id), kind, risks first
 * ("kind: reason"), pre-flight warnings, fields, then the Markdown description as text (multi-line
 * text kept as lines, never escaped), dependencies and dependents (`all` is the workspace's action
 * log, to find dependents), and the description digest. Every agent-written string passes through
 * {@link terminalSafe}, so invisible and direction-control characters show as ⟨U+XXXX⟩ tokens.
 * With `options.maxTextLines`, a longer description text shows its first lines and
 * "… N more lines" followed by `options.moreHint` (e.g. how to see the rest).
 */
export function showText(
  action: ActionRecord,
  all: ActionRecord[],
  options: { maxTextLines?: number; moreHint?: string } = {},
): string {
  const d = action.description;
  const out: string[] = [];
  const t = (s: string) => terminalSafe(s);
  out.push(`#${action.id} ${t(d?.summary || d?.title || "")}`);
  out.push(`status: ${statusName(action.status)}${action.outcomeUnknown ? " (OUTCOME UNKNOWN)" : ""}`);
  out.push(...outcomeLines(action));
  out.push(`binding: ${t(action.binding)}`);
  if (action.executionId) out.push(`execution: ${t(action.executionId)}`);
  if (d?.actionKind) out.push(`kind: ${t(JSON.stringify(d.actionKind))}`);
  for (const r of d?.risks ?? []) out.push(`RISK ${t(r.kind)}: ${t(r.reason)}`);
  for (const w of d?.preflightWarnings ?? []) out.push(`warning: ${t(w)}`);
  if (d?.fields.length) {
    out.push("fields:");
    for (const f of d.fields) out.push(`  ${t(f.name)}: ${t(f.value).split("\n").join("\n    ")}`);
  }
  if (d?.description) {
    const lines = t(d.description).split("\n");
    const max = options.maxTextLines ?? lines.length;
    out.push("", ...lines.slice(0, max));
    if (lines.length > max) {
      out.push(`… ${lines.length - max} more lines${options.moreHint ? ` (${options.moreHint})` : ""}`);
    }
    out.push("");
  }
  if (action.dependsOn.length) out.push(`depends on: ${action.dependsOn.map((i) => `#${i}`).join(", ")}`);
  const dependents = all.filter((a) => a.dependsOn.includes(action.id)).map((a) => `#${a.id}`);
  if (dependents.length) out.push(`dependents: ${dependents.join(", ")}`);
  out.push(`description digest: ${action.descriptionDigest || "(none)"}`);
  return out.join("\n");
}

/**
 * How `action` was decided and ended, as lines: `decided by`, `cascaded from`, the failure or
 * rejection `reason` (an outcome unknown says to check the system before doing it again) and an
 * applied action's `result` (its JSON, cut to 300 code points). Empty for an undecided action.
 */
function outcomeLines(action: ActionRecord): string[] {
  const t = (s: string) => terminalSafe(s);
  const out: string[] = [];
  if (action.decidedBy)
    out.push(`decided by: ${t(action.decidedBy)}${action.decidedAt ? ` at ${action.decidedAt}` : ""}`);
  if (action.cascadedFrom) out.push(`cascaded from: #${action.cascadedFrom}`);
  if (action.outcomeUnknown) {
    out.push("outcome: UNKNOWN — the request may have reached the system; check there before doing it again");
  }
  if (action.reason) out.push(`reason: ${t(action.reason)}`);
  if (action.resultJson) {
    const result = [...t(action.resultJson)]; // by code point: a cut never splits a surrogate pair
    out.push(`result: ${result.length > 300 ? `${result.slice(0, 300).join("")}…` : result.join("")}`);
  }
  return out;
}
