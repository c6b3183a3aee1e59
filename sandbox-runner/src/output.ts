/** One console line as reported in results. */
export interface ConsoleEntry {
  /** "log" | "info" | "warn" | "error" | "debug" */
  level: string;
  text: string;
}

const LEVELS = new Set(["log", "info", "warn", "error", "debug"]);

/** Text of the marker line appended once when output is cut. */
export function truncationMarker(capBytes: number): string {
  return `[gatehouse] console output truncated: limit of ${capBytes} bytes reached`;
}

/**
 * Collects console lines up to a byte budget (UTF-8 bytes of the line texts).
 * The line that crosses the budget is cut at a character boundary; then one "warn" marker line is
 * appended and everything after is dropped.
 */
export class OutputBuffer {
  readonly lines: ConsoleEntry[] = [];
  private used = 0;
  private cut = false;

  constructor(private readonly capBytes: number) {}

  /** True once output has been cut. */
  get truncated(): boolean {
    return this.cut;
  }

  /** Adds a line; returns the accepted (possibly shortened) entry, or null when dropped. */
  add(level: string, text: string): ConsoleEntry | null {
    if (this.cut) return null;
    const safeLevel = LEVELS.has(level) ? level : "log";
    const bytes = Buffer.byteLength(text, "utf8");
    if (this.used + bytes <= this.capBytes) {
      this.used += bytes;
      const entry = { level: safeLevel, text };
      this.lines.push(entry);
      return entry;
    }
    const room = this.capBytes - this.used;
    const kept = room > 0 ? cutUtf8(text, room) : "";
    this.cut = true;
    if (kept.length > 0) this.lines.push({ level: safeLevel, text: kept });
    this.lines.push({ level: "warn", text: truncationMarker(this.capBytes) });
    return kept.length > 0 ? { level: safeLevel, text: kept } : null;
  }
}

/** Longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export function cutUtf8(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, "utf8").subarray(0, maxBytes);
  // Decoding replaces a split trailing character with U+FFFD; drop it.
  const decoded = buf.toString("utf8");
  return decoded.endsWith("\uFFFD") && !text.startsWith(decoded) ? decoded.slice(0, -1) : decoded;
}
