/**
 * Reply sizes from the frame cap. Every value a gatekeeper returns to a sandbox travels as ONE
 * Cap'n Web frame (`["resolve", <id>, <value>]`, relayed byte for byte by the kernel), and the
 * sandbox runner ends the whole execution with a MessageSizeError when a frame is larger than its
 * cap (`SANDBOX_MAX_FRAME_BYTES`, default 1 MiB). A gatekeeper therefore sizes what it returns from
 * that cap, with these helpers, BEFORE it records the read's observation: a reply that cannot fit
 * is refused (nothing recorded), and paged text is cut into pages that fit even in the worst case.
 *
 * ```ts
 * const budget = replyBudget(maxFrameBytes);           // bytes a reply value may serialize to
 * const pageBytes = textPageBytes(maxFrameBytes, fixed); // text bytes per page, worst-case escaping
 * checkReplyFits(page, maxFrameBytes, "listFiles page 3", "narrow the binding with #path=");
 * ```
 */
import { serialize } from "capnweb";
import { ReplyTooLarge } from "./errors.ts";

/** The sandbox runner's default frame cap (its SANDBOX_MAX_FRAME_BYTES), bytes. */
export const DEFAULT_MAX_FRAME_BYTES = 1_048_576;

/** Smallest and largest frame cap a runner accepts (SANDBOX_MAX_FRAME_BYTES bounds), bytes. */
export const MIN_MAX_FRAME_BYTES = 1024;
export const MAX_MAX_FRAME_BYTES = 16_777_216;

/**
 * Bytes of a frame kept for capnweb's envelope around a reply value: `["resolve",` + an export id
 * (at most 16 digits) + `]` is under 30 bytes; the rest is margin.
 */
export const FRAME_ENVELOPE_BYTES = 64;

/**
 * Most bytes of JSON one byte of UTF-8 text can become: a control character such as U+0001 is one
 * byte of text and six of JSON (`\u0001`). Multi-byte characters never grow (they stay raw UTF-8).
 */
export const MAX_JSON_BYTES_PER_TEXT_BYTE = 6;

function checkCap(maxFrameBytes: number): void {
  if (
    !Number.isSafeInteger(maxFrameBytes) ||
    maxFrameBytes < MIN_MAX_FRAME_BYTES ||
    maxFrameBytes > MAX_MAX_FRAME_BYTES
  ) {
    throw new RangeError(
      `maxFrameBytes must be an integer from ${MIN_MAX_FRAME_BYTES} to ${MAX_MAX_FRAME_BYTES} (the sandbox runner's SANDBOX_MAX_FRAME_BYTES), got ${maxFrameBytes}`,
    );
  }
}

/**
 * Bytes a reply value may serialize to (capnweb's encoding) so its frame fits `maxFrameBytes`.
 * @throws RangeError when the cap is outside MIN_MAX_FRAME_BYTES..MAX_MAX_FRAME_BYTES.
 */
export function replyBudget(maxFrameBytes: number): number {
  checkCap(maxFrameBytes);
  return maxFrameBytes - FRAME_ENVELOPE_BYTES;
}

/** Bytes `value` takes in a frame: capnweb's serialization of it (the frame minus its envelope). */
export function serializedBytes(value: unknown): number {
  return Buffer.byteLength(serialize(value), "utf8");
}

/**
 * Bytes of UTF-8 text a page may hold so that the reply always fits `maxFrameBytes`, whatever the
 * text is: (budget - fixedBytes) / MAX_JSON_BYTES_PER_TEXT_BYTE, rounded down.
 * @param fixedBytes what the rest of the reply serializes to with the text empty (take the
 *   largest page numbers and sizes the reply can carry), e.g. `serializedBytes({content: "", page: 1e6, ...})`.
 * @throws RangeError for a bad cap, or when fixedBytes leaves no room for text.
 */
export function textPageBytes(maxFrameBytes: number, fixedBytes: number): number {
  const bytes = Math.floor((replyBudget(maxFrameBytes) - fixedBytes) / MAX_JSON_BYTES_PER_TEXT_BYTE);
  if (bytes < 1) throw new RangeError(`a frame cap of ${maxFrameBytes} bytes leaves no room for page text`);
  return bytes;
}

/**
 * Refuses a reply that would not fit one frame, so the caller can stop before recording anything.
 * @param what names the reply in the message, e.g. "listFiles page 3".
 * @param fix what the caller can do, e.g. "narrow the binding with #path=".
 * @returns the reply's serialized size, bytes.
 * @throws ReplyTooLarge naming `what`, its size, the cap (SANDBOX_MAX_FRAME_BYTES) and `fix`.
 */
export function checkReplyFits(value: unknown, maxFrameBytes: number, what: string, fix: string): number {
  const budget = replyBudget(maxFrameBytes);
  const bytes = serializedBytes(value);
  if (bytes > budget) {
    throw new ReplyTooLarge(
      `${what} would be ${bytes} bytes, over the ${budget} bytes one reply may take under the sandbox's frame cap of ${maxFrameBytes} bytes (SANDBOX_MAX_FRAME_BYTES); nothing was read. ${fix}`,
    );
  }
  return bytes;
}

/** JSON bytes of one code point inside a JSON string (as JSON.stringify writes it). */
function jsonCodePointBytes(cp: number, lone: boolean): number {
  if (lone) return 6;
  if (cp === 0x22 || cp === 0x5c) return 2;
  if (cp < 0x20) return cp === 0x08 || cp === 0x09 || cp === 0x0a || cp === 0x0c || cp === 0x0d ? 2 : 6;
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp < 0x10000) return 3;
  return 4;
}

/**
 * The longest prefix of `text` (whole characters) whose JSON string form, without its quotes,
 * takes at most `maxBytes` bytes.
 */
export function cutToJsonBytes(text: string, maxBytes: number): string {
  let used = 0;
  let i = 0;
  while (i < text.length) {
    const cp = text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    const lone = cp >= 0xd800 && cp <= 0xdfff;
    const add = jsonCodePointBytes(cp, lone);
    if (used + add > maxBytes) break;
    used += add;
    i += width;
  }
  return text.slice(0, i);
}

/** A text field inside a reply that may be shortened to make the reply fit. */
export interface CuttableText {
  get(): string;
  /** Replaces the text with `cut` (a prefix of it) and marks the field as cut (at most CUT_MARK_BYTES more). */
  set(cut: string): void;
}

/** JSON bytes each cut field may add after `set` (a marker such as "\n(cut to fit one reply)", a flag). */
export const CUT_MARK_BYTES = 64;

/**
 * Makes `value` fit one frame by cutting the longest of `texts` to a common length (the shorter
 * ones stay whole), so a page of many items keeps every item and as much of each as fits.
 * Nothing is cut when the value fits already.
 * @returns the number of texts cut.
 * @throws ReplyTooLarge (via checkReplyFits) when even empty texts would not fit.
 */
export function cutTextsToFit(
  value: unknown,
  maxFrameBytes: number,
  texts: readonly CuttableText[],
  what: string,
  fix: string,
): number {
  const budget = replyBudget(maxFrameBytes);
  const total = serializedBytes(value);
  if (total <= budget) return 0;
  const sizes = texts.map((t) => Buffer.byteLength(JSON.stringify(t.get()), "utf8") - 2);
  const fixed = total - sizes.reduce((a, b) => a + b, 0);
  const room = budget - fixed - texts.length * CUT_MARK_BYTES;
  let cut = 0;
  if (room > 0) {
    // Largest ceiling c with sum(min(size, c)) <= room (binary search; sizes are bytes).
    let lo = 0;
    let hi = Math.max(0, ...sizes);
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      const sum = sizes.reduce((a, s) => a + Math.min(s, mid), 0);
      if (sum <= room) lo = mid;
      else hi = mid - 1;
    }
    texts.forEach((t, i) => {
      if (sizes[i]! > lo) {
        t.set(cutToJsonBytes(t.get(), lo));
        cut++;
      }
    });
  }
  checkReplyFits(value, maxFrameBytes, what, fix);
  return cut;
}
