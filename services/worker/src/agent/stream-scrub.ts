/**
 * Scrubbing the provider key out of text that arrives in pieces (a model step's streamed text): the
 * key may be split across pieces, so each piece is not scrubbed on its own. The text so far is
 * scrubbed as a whole and only its final part is given out; a tail that could still turn out to be
 * the start of the key (at most the key's length minus one characters) is held back until more text
 * arrives or the text ends. What is given out, joined, is exactly `scrub(all the text, secret)` — the
 * text recorded in the step's ChatModelMessage — so no piece ever carries any part of the key.
 */
import { scrub } from "@gatehouse/agent-core/providers";

/** The scrubber of one stream of text. */
export interface StreamScrubber {
  /** Adds text that just arrived; returns the scrubbed text now final ("" when all of it is held back). */
  push(text: string): string;
  /** The text has ended: returns the rest, scrubbed, and holds nothing more. */
  end(): string;
}

/**
 * A scrubber replacing each occurrence of `secret` with "[redacted]", as agent-core's `scrub` does
 * (leftmost first, occurrences not overlapping). An empty `secret` passes text through at once.
 */
export function streamScrubber(secret: string): StreamScrubber {
  if (!secret) return { push: (text) => text, end: () => "" };
  let pending = "";
  return {
    push(text) {
      pending += text;
      const cut = finalLength(pending, secret);
      const out = scrub(pending.slice(0, cut), secret);
      pending = pending.slice(cut);
      return out;
    },
    end() {
      const out = scrub(pending, secret);
      pending = "";
      return out;
    },
  };
}

/**
 * How many leading characters of `text` no later text can change the scrubbing of: everything up to
 * the end of the last whole occurrence of `secret`, then up to the first position whose rest is a
 * proper prefix of `secret` (an occurrence that more text may complete). Every position before the
 * cut either lies inside a found occurrence or starts no occurrence whatever follows, so the scan of
 * the whole text passes the cut at an occurrence boundary.
 */
function finalLength(text: string, secret: string): number {
  let end = 0;
  for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, end)) end = at + secret.length;
  for (let p = Math.max(end, text.length - secret.length + 1); p < text.length; p++)
    if (secret.startsWith(text.slice(p))) return p;
  return text.length;
}
