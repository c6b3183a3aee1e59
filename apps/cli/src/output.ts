/** Rendering for people (tables) and scripts (`--json`). */
import { showInvisible, visibleLine } from "@gatehouse/gateway-contract/invisible";
import {
  type ActionRecord,
  actionStatusToJSON,
  type LogView,
  type Turn,
  type VerifyResponse,
} from "@gatehouse/proto";
import { renderTable } from "./table.ts";

/** "ACTION_STATUS_PENDING" → "pending". */
export function statusName(status: ActionRecord["status"]): string {
  return actionStatusToJSON(status)
    .replace(/^ACTION_STATUS_/, "")
    .toLowerCase();
}

/**
 * Makes untrusted text inert and honest on a terminal: every character that does not show as
 * itself — C0/C1 control characters (except newline and tab), DEL, bidirectional controls,
 * zero-width and other format characters (`showInvisible` of @gatehouse/gateway-contract) —
 * becomes a visible token such as `⟨U+001B⟩` or `⟨U+202E⟩`, the same the web app shows. So an
 * agent's text cannot move the cursor, recolour, retitle the window, forge table rows, or read
 * differently from the bytes that apply. `--json` output is not passed through this.
 */
export function terminalSafe(text: string): string {
  return showInvisible(text);
}

/**
 * Prints `value` as JSON (for --json) or `text()` for people; text for people goes through
 * `terminalSafe`, since it carries agent-controlled strings.
 */
export function emit(json: boolean, value: unknown, text: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${terminalSafe(text())}\n`);
}

/**
 * A plain table (no colour codes, so output is the same in a terminal, a pipe or a file), built
 * row by row; `toString()` renders it (linear time: table.ts).
 */
function table(head: string[]): { push(row: string[]): void; toString(): string } {
  const rows: string[][] = [];
  return { push: (row) => rows.push(row), toString: () => renderTable(head, rows) };
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ");
}

/**
 * One table cell (`visibleLine`): every script kept, invisible characters as tokens (so widths are
 * right), one line, at most `n` user-perceived characters (grapheme clusters; a cut never splits an
 * accented letter, an emoji or a token).
 */
function cut(s: string, n: number): string {
  return visibleLine(oneLine(s), n);
}

/** A short cell that is not cut (ids, names): invisible characters as tokens, one line. */
function cell(s: string): string {
  return oneLine(terminalSafe(s));
}

/**
 * The "chat of" cell: the person who started an agent caller's chat (ChatStarted), without "user:",
 * e.g. "dev-approver"; "" for other callers or chats started before ChatStarted was recorded.
 */
function chatOf(chatStartedBy: string): string {
  return cut(cell(chatStartedBy.replace(/^user:/, "")), 24);
}

/**
 * A table of actions: id, status, binding, title, dependencies, outcome (and which action a revert
 * undoes), and whose agent chat submitted it.
 */
export function actionsTable(actions: ActionRecord[]): string {
  if (actions.length === 0) return "(no actions)";
  const t = table(["id", "status", "binding", "risk", "summary", "depends on", "note", "chat of"]);
  for (const a of actions) {
    const outcome = a.cascadedFrom
      ? a.reason
      : a.outcomeUnknown
        ? `OUTCOME UNKNOWN: ${a.reason}`
        : a.reason || (a.decidedBy ? `by ${a.decidedBy}` : "");
    const reverts = a.description?.implementsRevert ? `reverts #${a.description.implementsRevert}` : "";
    const note = [reverts, outcome].filter(Boolean).join("; ");
    t.push([
      String(a.id),
      statusName(a.status),
      cell(a.binding),
      riskMarker(a),
      cut(a.description?.summary || a.description?.title || "", 50),
      a.dependsOn.join(","),
      cut(note, 60),
      chatOf(a.chatStartedBy),
    ]);
  }
  return t.toString();
}

/**
 * The risk column of an action row: "!" and the risk kinds ("! destructive,egress") when the
 * gatekeeper named any risks in the action's description, else "".
 */
export function riskMarker(a: ActionRecord): string {
  const kinds = [...new Set((a.description?.risks ?? []).map((r) => r.kind))];
  return kinds.length ? cut(`! ${kinds.join(",")}`, 30) : "";
}

/**
 * "stream revision 13 (14 events; revisions count from 0)": a stream revision is the 0-based
 * position of an event in the workspace stream, so the stream up to revision r holds r + 1 events
 * (what `verify` counts, and what `replay --until <revision>` takes).
 */
export function revisionAndCount(revision: number): string {
  return `stream revision ${revision} (${revision + 1} event${revision === 0 ? "" : "s"}; revisions count from 0)`;
}

/**
 * `turn`'s text: the state and the awaited ids, the reason when it completed, then one line per
 * awaited action with its result (an older stream may lack some: those say so).
 */
export function turnText(turn: Turn): string {
  const head = `turn ${turn.turnId}: ${turn.state} (awaiting ${turn.awaitedActionIds.join(", ")})`;
  const byId = new Map(turn.results.map((r) => [r.actionId, r]));
  const ids = [
    ...turn.awaitedActionIds,
    ...turn.results.map((r) => r.actionId).filter((id) => !turn.awaitedActionIds.includes(id)),
  ];
  const rows =
    turn.state === "suspended"
      ? []
      : ids.map((id) => {
          const r = byId.get(id);
          if (!r) return `  action ${id}: no result recorded (not decided when the turn ended)`;
          return `  action ${id}: ${r.status}${r.reason ? ` — ${r.reason}` : ""}${r.resultJson ? `\n    ${r.resultJson}` : ""}`;
        });
  return [head, ...(turn.reason ? [`  ${turn.reason}`] : []), ...rows].join("\n");
}

/**
 * `verify`'s line: "ok: 14 events (stream revisions 0 to 13), hash chain intact", or the first
 * tampered stream revision and what is wrong there.
 */
export function verifyText(res: VerifyResponse): string {
  if (!res.ok)
    return `TAMPERED at stream revision ${res.firstBadRevision} (revisions count from 0): ${res.problem}`;
  const n = res.eventsChecked;
  const span = n > 0 ? ` (stream revisions 0 to ${n - 1})` : "";
  return `ok: ${n} event${n === 1 ? "" : "s"}${span}, hash chain intact`;
}

/**
 * Observations, actions and refused writes in one table, by log id (with whose agent chat made
 * each, "chat of"); below it, each refused write
 * with its full reason (`#12 refused  REPO  push main: <reason>`), since reasons are too long for
 * a cell. The caller makes the text terminal-safe (`emit`).
 */
export function logTable(view: LogView): string {
  const t = table(["id", "kind", "binding", "status", "title", "chat of"]);
  const refusals: string[] = [];
  for (const e of view.entries) {
    const entry = e.entry;
    if (entry?.$case === "observation") {
      const o = entry.observation;
      t.push([
        String(e.id),
        "observation",
        cell(o.binding),
        o.description?.containsRestrictedData ? "RESTRICTED" : "",
        cut(o.description?.title ?? "", 60),
        chatOf(o.chatStartedBy),
      ]);
    } else if (entry?.$case === "action") {
      const a = entry.action;
      t.push([
        String(e.id),
        "action",
        cell(a.binding),
        statusName(a.status),
        cut(a.description?.title ?? "", 60),
        chatOf(a.chatStartedBy),
      ]);
    } else if (entry?.$case === "refusal") {
      const r = entry.refusal;
      const title = r.description?.title ?? "";
      t.push([String(e.id), "refusal", cell(r.binding), "refused", cut(title, 60), chatOf(r.chatStartedBy)]);
      // One line per refusal: titles are agent-controlled, so no newline may forge another line.
      refusals.push(`#${e.id} refused  ${cell(r.binding)}  ${cut(title, 60)}: ${cell(r.reason)}`);
    }
  }
  const head = `workspace ${view.workspaceId} at ${revisionAndCount(view.revision)}${view.latched ? " — LATCHED (restricted data read)" : ""}`;
  const rules = view.rules.length
    ? `\nauto-approval rules: ${view.rules.map((r) => `${r.binding}/${r.actionKindTag}`).join(", ")}`
    : "";
  const refused = refusals.length ? `\nrefused writes (nothing was staged):\n${refusals.join("\n")}` : "";
  return `${head}\n${view.entries.length ? t.toString() : "(empty log)"}${refused}${rules}`;
}
