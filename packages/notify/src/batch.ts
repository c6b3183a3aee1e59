/**
 * A batch of writes that waits for review: what every notification format is built from.
 * Summaries come from gatekeepers and agents, so they are untrusted text; each format escapes them.
 */
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
/** A summary longer than this many characters is cut and ends with "…". */
export const MAX_SUMMARY_CHARS = 200;

/** `text` cut to `max` characters (code points), ending in "…" when cut; line breaks become spaces. */
export function bound(text: string, max = MAX_SUMMARY_CHARS): string {
  const oneLine = text.replace(/[\r\n\t]+/g, " ");
  const chars = Array.from(oneLine);
  return chars.length <= max ? oneLine : `${chars.slice(0, max - 1).join("")}…`;
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
