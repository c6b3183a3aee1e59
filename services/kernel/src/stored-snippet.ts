/**
 * What an execution's CodeExecuted keeps of the snippet and its console, so approvers can read the
 * code that produced a turn's writes (the "commit message" of the change). Both are untrusted text,
 * bounded so one execution never makes a huge event: the code at CODE_MAX_BYTES (UTF-8, cut at a
 * character boundary), the console at CONSOLE_MAX_BYTES in all (whole lines dropped from the end).
 */
import type { ConsoleLine } from "@gatehouse/proto";

/** Most code bytes kept (UTF-8). */
export const CODE_MAX_BYTES = 256 * 1024;
/** Most console bytes kept, all lines together (UTF-8, "<level>: <text>" each). */
export const CONSOLE_MAX_BYTES = 64 * 1024;

/** `text` cut to at most `maxBytes` UTF-8 bytes without splitting a character. */
function cutUtf8(text: string, maxBytes: number): { text: string; cut: boolean } {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return { text, cut: false };
  let end = maxBytes;
  // Back up over continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString("utf8"), cut: true };
}

/**
 * The CodeExecuted fields that keep the snippet and its console.
 * @param code the snippet as it ran
 * @param console its console lines, in order
 */
export function storedSnippet(
  code: string,
  console: readonly ConsoleLine[],
): { code: string; codeTruncated: boolean; console: string[]; consoleTruncated: boolean } {
  const kept = cutUtf8(code, CODE_MAX_BYTES);
  const lines: string[] = [];
  let used = 0;
  let consoleTruncated = false;
  for (const line of console) {
    const text = `${line.level}: ${line.text}`;
    const size = Buffer.byteLength(text, "utf8");
    if (used + size > CONSOLE_MAX_BYTES) {
      consoleTruncated = true;
      break;
    }
    lines.push(text);
    used += size;
  }
  return { code: kept.text, codeTruncated: kept.cut, console: lines, consoleTruncated };
}
