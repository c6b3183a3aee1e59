/**
 * Reads of one blob front to back without starting over at each page: one `git cat-file blob`
 * runs for the whole walk and waits between reads (pipe back-pressure), so reading a file page by
 * page streams it once (O(size)) instead of once per page (O(size² / page)). Memory stays near one
 * page plus a pipe's worth. A cursor that sits idle for IDLE_MS ends its git process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { GitFailed } from "./git.ts";

/** A cursor unused for this long ends its git process, ms. */
export const IDLE_MS = 10_000;

/** Bytes kept before the end of the last read, so the next page may look a few bytes back. */
const KEEP_BEHIND = 16;

export class BlobCursor {
  readonly sha: string;
  readonly #child: ChildProcess;
  readonly #chunks: AsyncIterator<Buffer>;
  /** Absolute offset of #buf[0]. */
  #pos = 0;
  #buf: Buffer = Buffer.alloc(0);
  #ended = false;
  #closed = false;
  #queue: Promise<unknown> = Promise.resolve();
  #idle: NodeJS.Timeout | undefined;

  constructor(gitDir: string, sha: string) {
    this.sha = sha;
    this.#child = spawn("git", [`--git-dir=${gitDir}`, "cat-file", "blob", sha], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? "/",
        GIT_CONFIG_NOSYSTEM: "1",
      },
      stdio: ["ignore", "pipe", "ignore"],
    });
    this.#child.on("error", () => this.close());
    this.#chunks = this.#child.stdout![Symbol.asyncIterator]();
    this.#touch();
  }

  /** True when this cursor can still serve a read starting at byte `start`. */
  canServe(start: number): boolean {
    return !this.#closed && start >= this.#pos;
  }

  /**
   * Bytes [start, end) of the blob (fewer at its end). Reads are served one at a time, in call order.
   * @throws RangeError when `start` is behind the cursor (see canServe); GitFailed when git fails.
   */
  range(start: number, end: number): Promise<Buffer> {
    const next = this.#queue.then(() => this.#read(start, end));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #read(start: number, end: number): Promise<Buffer> {
    if (!this.canServe(start)) throw new RangeError(`this blob cursor is past byte ${start}`);
    this.#touch();
    try {
      while (this.#pos + this.#buf.length < end && !this.#ended) {
        const { value, done } = await this.#chunks.next();
        if (done) {
          this.#ended = true;
          break;
        }
        this.#buf = this.#buf.length === 0 ? value : Buffer.concat([this.#buf, value]);
        if (this.#pos < start) {
          const drop = Math.min(start - this.#pos, this.#buf.length);
          this.#buf = this.#buf.subarray(drop);
          this.#pos += drop;
        }
      }
    } catch (e) {
      this.close();
      throw e instanceof Error ? e : new GitFailed(["cat-file"], null, "");
    }
    if (this.#ended && this.#pos + this.#buf.length < end && this.#child.exitCode !== 0) {
      await new Promise((resolve) =>
        this.#child.exitCode === null ? this.#child.once("close", resolve) : resolve(0),
      );
      if (this.#child.exitCode !== 0) {
        this.close();
        throw new GitFailed(["cat-file"], this.#child.exitCode, "");
      }
    }
    const out = Buffer.from(this.#buf.subarray(Math.max(0, start - this.#pos), Math.max(0, end - this.#pos)));
    const keepFrom = Math.max(this.#pos, Math.min(end, this.#pos + this.#buf.length) - KEEP_BEHIND);
    this.#buf = Buffer.from(this.#buf.subarray(keepFrom - this.#pos));
    this.#pos = keepFrom;
    return out;
  }

  #touch(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => this.close(), IDLE_MS);
    this.#idle.unref();
  }

  /** Ends the git process; later reads are refused (canServe is false). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#idle);
    this.#buf = Buffer.alloc(0);
    if (this.#child.exitCode === null) this.#child.kill("SIGKILL");
  }
}
