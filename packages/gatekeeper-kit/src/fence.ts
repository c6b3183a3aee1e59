/**
 * Fencing and bounding of untrusted text for approver descriptions (docs/architecture.md "The approval contract":
 * untrusted text is fenced and bounded). The fence is one backtick longer than the longest run of
 * backticks inside the text (CommonMark "Fenced code blocks": a closing fence must be at least as
 * long as the opening one), so the text can never close it and renders inert.
 */

/** Marker appended inside a fence when the text was cut to its budget. */
export const CUT_MARKER = "… [cut: exceeds the byte budget]";

/** Cuts `text` to at most `maxBytes` UTF-8 bytes on a code-point boundary. */
export function truncateUtf8(text: string, maxBytes: number): { text: string; cut: boolean } {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return { text, cut: false };
  let end = maxBytes;
  // Step back over UTF-8 continuation bytes (10xxxxxx) so we never split a code point.
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return { text: buf.subarray(0, end).toString("utf8"), cut: true };
}

/**
 * Returns `text` bounded to `maxBytes` and fenced as a code block with info string `lang`.
 * `complete` is false when the text was cut (the marker is then inside the fence).
 */
export function fenceUntrusted(
  text: string,
  maxBytes: number,
  lang = "text",
): { markdown: string; complete: boolean } {
  const { text: body, cut } = truncateUtf8(text, maxBytes);
  const shown = cut ? `${body}\n${CUT_MARKER}` : body;
  const longestRun = Math.max(0, ...(shown.match(/`+/g) ?? []).map((r) => r.length));
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  return { markdown: `${fence}${lang}\n${shown}\n${fence}`, complete: !cut };
}
