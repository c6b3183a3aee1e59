/**
 * Leadership among replicas on one PostgreSQL database: the holder of a session advisory lock (on a
 * dedicated connection) runs the job (by default the read-model projector); the others try again every
 * second. The lock is released when its connection ends, so a leader that dies or is closed hands over.
 * Other jobs that must run once per installation (the kernel's review notifier) use their own lock key.
 */
import pg from "pg";
import type pino from "pino";

/** The advisory lock key of the read-model projector (pg_try_advisory_lock). */
export const PROJECTOR_LOCK_KEY = 7_420_117_002;

/** How often a follower tries to take the lock, ms. */
const RETRY_MS = 1000;

/** Options of {@link Leadership}. */
export interface LeadershipOptions {
  url: string;
  logger: pino.Logger;
  /** The advisory lock key (default {@link PROJECTOR_LOCK_KEY}); one key per job. */
  lockKey?: number;
  /** What is led, for the log lines (default "the read-model projector"). */
  job?: string;
  /** Called when this replica takes the lock; the returned stop is awaited when it loses it or closes. */
  lead(): () => Promise<void>;
}

/** Tries to lead until {@link close}: see the module comment. Never throws (failures are logged and retried). */
export class Leadership {
  private closed = false;
  private leading = false;
  private wakeUp: (() => void) | undefined;
  private readonly done: Promise<void>;

  constructor(private readonly options: LeadershipOptions) {
    this.done = this.run();
  }

  /** True while this replica holds the lock. */
  isLeader(): boolean {
    return this.leading;
  }

  /** Stops leading (awaiting the projector's stop) and ends the lock connection. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    this.wakeUp?.();
    await this.done;
  }

  private async run(): Promise<void> {
    const { logger } = this.options;
    const key = this.options.lockKey ?? PROJECTOR_LOCK_KEY;
    const job = this.options.job ?? "the read-model projector";
    while (!this.closed) {
      const client = new pg.Client({ connectionString: this.options.url, connectionTimeoutMillis: 5000 });
      let lost = false;
      const onLost = () => {
        lost = true;
        this.wakeUp?.();
      };
      client.on("error", onLost);
      client.on("end", onLost);
      try {
        await client.connect();
        while (!this.closed && !lost) {
          const r = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [key]);
          if (r.rows[0]?.ok) break;
          await this.pause(RETRY_MS);
        }
        if (!this.closed && !lost) {
          this.leading = true;
          logger.info(`this replica leads ${job}`);
          const stop = this.options.lead();
          while (!this.closed && !lost) await this.pause(60_000);
          await stop();
          this.leading = false;
          if (lost) logger.warn(`lost the lock of ${job} (connection dropped)`);
        }
      } catch (error) {
        if (!this.closed) logger.warn({ err: error }, `the lock of ${job} is unavailable; retrying`);
      } finally {
        this.leading = false;
        client.off("end", onLost);
        await client.end().catch(() => {});
      }
      if (!this.closed) await this.pause(RETRY_MS);
    }
  }

  private pause(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        if (self.wakeUp === done) self.wakeUp = undefined;
        resolve();
      }
      this.wakeUp = done;
    });
  }
}
