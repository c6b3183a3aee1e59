/**
 * Coalesces re-reads per key: at most one run in flight per key, plus at most one queued behind it.
 * Requests arriving while one is queued join that queued run, so a burst of notices costs two reads.
 */
export interface Coalescer {
  /** Asks for a run of `key`; returns at once. */
  request(key: string): void;
}

/** Wraps `run` (errors are the caller's to report inside `run`) in a per-key coalescer. */
export function createCoalescer(run: (key: string) => Promise<void>): Coalescer {
  const state = new Map<string, "running" | "queued">();

  const start = (key: string): void => {
    state.set(key, "running");
    run(key)
      .catch(() => undefined)
      .finally(() => {
        if (state.get(key) === "queued") start(key);
        else state.delete(key);
      });
  };

  return {
    request(key) {
      const current = state.get(key);
      if (current === "running") state.set(key, "queued");
      else if (current === undefined) start(key);
    },
  };
}
