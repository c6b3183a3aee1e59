/**
 * A batch of writes that waits for review: what every notification format is built from.
 * Summaries come from gatekeepers and agents, so they are untrusted text; each format escapes them.
 */
import { visibleLine } from "@gatehouse/gateway-contract/invisible";

export interface WaitingBatch {
  /** Workspace id the pending actions belong to. */
  workspace: string;
  /** Which turn: one MCP execution (`execution`) or one built-in agent turn (`turn`). */
  selection: { kind: "execution"; executionId: string } | { kind: "turn"; turnId: string };
  /** Number of actions still pending from this turn. */
  pending: number;
  /** How many of them carry at least one risk (destructive, egress, irreversible, content). */
  risky: number;
  /** One-line summaries of the pending actions, in submission order (bounded when rendered). */
  summaries: string[];
}

/** At most this many action summaries appear in a message; the rest are counted as "and N more". */
export const MAX_SUMMARIES = 10;
/** A summary longer than this many user-perceived characters (grapheme clusters) is cut and ends with "…". */
export const MAX_SUMMARY_CHARS = 200;

/**
 * `text` as one line a person reads as it is (`visibleLine` of @gatehouse/gateway-contract): every
 * script kept, line breaks and tabs as spaces, each invisible or direction-control character as
 * its `⟨U+202E⟩` token (also in an email subject or a chat message, which would obey or hide it),
 * cut to `max` grapheme clusters, ending in "…" when cut.
 */
export function bound(text: string, max = MAX_SUMMARY_CHARS): string {
  return visibleLine(text, max);
}

/** The summaries a message shows (bounded in count and length) and how many were left out. */
export function shownSummaries(batch: WaitingBatch, max = MAX_SUMMARIES): { shown: string[]; more: number } {
  const shown = batch.summaries.slice(0, max).map((s) => bound(s));
  return { shown, more: Math.max(0, batch.summaries.length - shown.length) };
}

/**
 * The review page's deep link: `<publicUrl>/#/ws/<ws>/review?execution=<id>` or `?turn=<turnId>`.
 * It never carries a token: the person signs in on arrival.
 */
export function reviewUrl(publicUrl: string, batch: WaitingBatch): string {
  const base = `${publicUrl.replace(/\/+$/, "")}/#/ws/${encodeURIComponent(batch.workspace)}/review`;
  return batch.selection.kind === "execution"
    ? `${base}?execution=${encodeURIComponent(batch.selection.executionId)}`
    : `${base}?turn=${encodeURIComponent(batch.selection.turnId)}`;
}

/** "1 write waits" / "N writes wait" for your review in <workspace>: the headline and email subject. */
export function headline(batch: WaitingBatch): string {
  const verb = batch.pending === 1 ? "1 write waits" : `${batch.pending} writes wait`;
  return `${verb} for your review in ${bound(batch.workspace, 100)}`;
}
