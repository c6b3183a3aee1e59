/**
 * The review page's facts about one staged MCP tool call: a one-line summary, the key arguments as
 * fields, risks (destructive by tool name; content flags over every string argument) and a preview
 * of the main text argument. Generic over any tool; no reads of the bound server.
 */

import { contentRisks, oneLine } from "@gatehouse/gatekeeper-kit";
import type { ActionField, ActionRisk } from "@gatehouse/proto";

/** Argument names that identify what a call acts on, in order of preference. */
const KEY_NAMES = ["path", "name", "id", "key", "title", "url", "entityName", "from", "relationType", "to"];
const DESTRUCTIVE = /(delete|remove|drop|destroy|purge|overwrite)/i;

/** Review facts for ActionDescription (summary ≤ 200 chars, field values one line ≤ 200 chars). */
export interface ReviewFacts {
  summary: string;
  fields: ActionField[];
  risks: ActionRisk[];
  preview: string;
}

function lineCount(s: string): number {
  return s.split("\n").length;
}

function scalar(v: unknown): string | undefined {
  if (typeof v === "string") return v.includes("\n") ? `(${lineCount(v)} lines)` : v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) {
    const names = v
      .map((x) =>
        typeof x === "string"
          ? x
          : x && typeof x === "object"
            ? nameOf(x as Record<string, unknown>)
            : undefined,
      )
      .filter((x): x is string => !!x);
    if (names.length === 0) return v.length ? `(${v.length} items)` : undefined;
    return names.slice(0, 2).join(", ") + (names.length > 2 ? ` (+${names.length - 2})` : "");
  }
  return undefined;
}

function nameOf(o: Record<string, unknown>): string | undefined {
  if (typeof o.from === "string" && typeof o.to === "string")
    return `${o.from} ${o.relationType ?? "→"} ${o.to}`;
  for (const k of KEY_NAMES) if (typeof o[k] === "string") return o[k] as string;
  return undefined;
}

function strings(v: unknown, at: string, out: { name: string; text: string }[]): void {
  if (typeof v === "string") out.push({ name: at, text: v });
  else if (Array.isArray(v))
    v.forEach((x, i) => {
      strings(x, `${at}[${i}]`, out);
    });
  else if (v && typeof v === "object")
    for (const [k, x] of Object.entries(v)) strings(x, at ? `${at}.${k}` : k, out);
}

/** Builds the review facts for `tool` called with `args` (the call's JSON arguments); `destructiveHint` is the tool annotation. */
export function reviewFacts(
  tool: string,
  args: Record<string, unknown>,
  destructiveHint = false,
): ReviewFacts {
  const fields: ActionField[] = [];
  for (const [k, v] of Object.entries(args)) {
    const s = scalar(v);
    if (s !== undefined) fields.push({ name: k, value: oneLine(s, 200) });
  }
  const summary = oneLine(`${tool} ${fields.map((f) => f.value).join(" ")}`.trim(), 200);
  const risks: ActionRisk[] = [];
  const m = DESTRUCTIVE.exec(tool);
  if (destructiveHint)
    risks.push({ kind: "destructive", reason: "the server marks this tool destructive (destructiveHint)" });
  else if (m)
    risks.push({ kind: "destructive", reason: `the tool's name says it ${(m[1] ?? "").toLowerCase()}s` });
  const texts: { name: string; text: string }[] = [];
  strings(args, "", texts);
  risks.push(...contentRisks(texts));
  const main = texts.filter((t) => t.text.includes("\n")).sort((a, b) => b.text.length - a.text.length)[0];
  const preview = main ? main.text.split("\n").slice(0, 3).join("\n").slice(0, 300) : "";
  return { summary, fields, risks, preview };
}
