/**
 * A steady stream of API requests against an installed gateway, as its users would send them during
 * an upgrade: one request every `everyMs`, not waiting for the previous one, each recorded with its
 * outcome and time. For counting the requests a rollout fails and the window in which it fails them.
 */

/** One request's outcome. */
export interface LoopOutcome {
  path: string;
  /** When it was sent, ms since the loop started. */
  sentAtMs: number;
  /** How long it took, ms. */
  ms: number;
  ok: boolean;
  /** "200", "503 {…}" or the network error (e.g. "ECONNREFUSED"). */
  what: string;
}

/** What a stopped loop saw. */
export interface LoopReport {
  outcomes: LoopOutcome[];
  failed: LoopOutcome[];
  /** Sent-at time of the first and the last failed request, ms since the loop started (undefined: none failed). */
  firstFailureMs: number | undefined;
  lastFailureMs: number | undefined;
  /** From the first failed request's sending to the last failed one's answer, ms (0: none failed). */
  failureWindowMs: number;
  /** The slowest request, ms. */
  slowestMs: number;
}

/** A running loop: `stop()` waits for the requests still under way and reports. */
export interface RequestLoop {
  /** Outcomes so far. */
  readonly outcomes: readonly LoopOutcome[];
  /** Resolves once `n` more requests than now have been answered (or failed); rejects after `timeoutMs`. */
  answered(n: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<LoopReport>;
}

/**
 * Starts the loop: every `everyMs` (default 100) a GET of the next of `paths` on `base`
 * ("http://host:port") with `Authorization: Bearer <token>`, each with a 60 s limit.
 */
export function startRequestLoop(base: string, token: string, paths: string[], everyMs = 100): RequestLoop {
  const t0 = performance.now();
  const outcomes: LoopOutcome[] = [];
  const inFlight = new Set<Promise<void>>();
  let sending = true;
  let sent = 0;
  const one = async (path: string) => {
    const sentAtMs = performance.now() - t0;
    const done = (ok: boolean, what: string) =>
      outcomes.push({ path, sentAtMs, ms: performance.now() - t0 - sentAtMs, ok, what });
    try {
      const res = await fetch(new URL(path, base), {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      done(res.ok, res.ok ? String(res.status) : `${res.status} ${text.slice(0, 300)}`);
    } catch (err) {
      const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
      done(false, cause?.code ?? cause?.message ?? (err as Error).message);
    }
  };
  const sender = (async () => {
    while (sending) {
      const p = one(paths[sent++ % paths.length] as string);
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    outcomes,
    async answered(n, timeoutMs = 120_000) {
      const want = outcomes.length + n;
      const deadline = Date.now() + timeoutMs;
      while (outcomes.length < want) {
        if (Date.now() > deadline)
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${n} answers from ${base}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      sending = false;
      await sender;
      await Promise.all([...inFlight]);
      const failed = outcomes.filter((o) => !o.ok);
      const first = failed.length ? Math.min(...failed.map((f) => f.sentAtMs)) : undefined;
      const last = failed.length ? Math.max(...failed.map((f) => f.sentAtMs)) : undefined;
      const lastEnd = failed.length ? Math.max(...failed.map((f) => f.sentAtMs + f.ms)) : 0;
      return {
        outcomes,
        failed,
        firstFailureMs: first,
        lastFailureMs: last,
        failureWindowMs: first === undefined ? 0 : Math.round(lastEnd - first),
        slowestMs: Math.round(Math.max(0, ...outcomes.map((o) => o.ms))),
      };
    },
  };
}
