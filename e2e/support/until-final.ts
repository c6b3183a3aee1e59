/**
 * Waiting for a batch to end, as a person following it would: Decisions.WatchLog from the start of the
 * workspace stream (catch-up, then live), until every action of a set has a final status (applied,
 * failed or rejected). Used by the lifecycle acceptance tests and `npm run bench:lifecycle`.
 */
import { ActionStatus, type DecisionsClient, type LogChange } from "@gatehouse/proto";

const FINAL = new Set([
  ActionStatus.ACTION_STATUS_APPLIED,
  ActionStatus.ACTION_STATUS_FAILED,
  ActionStatus.ACTION_STATUS_REJECTED,
]);

/** How a watched set ended: the final status of every action, and when the last one became final. */
export interface FinalOutcome {
  /** Action id → its final status. */
  status: Map<number, ActionStatus>;
  /** performance.now() when the last action of the set became final (as this watcher heard it). */
  lastFinalAt: number;
}

/**
 * Resolves once every id in `ids` is final in `workspaceId`'s log. `onProgress(finalCount)` is called
 * after each change of the count. @throws Error when the watch stream fails (e.g. the approval
 * service went away) or nothing became final for `stallMs` (default 10 minutes), naming how many are
 * final and the first ids that are not; the caller may watch again (it catches up from the stream's start).
 */
export function untilFinal(
  decisions: DecisionsClient,
  workspaceId: string,
  ids: Iterable<number>,
  options: { stallMs?: number; onProgress?: (final: number) => void } = {},
): Promise<FinalOutcome> {
  const wanted = new Set(ids);
  const status = new Map<number, ActionStatus>();
  const stallMs = options.stallMs ?? 600_000;
  return new Promise((resolve, reject) => {
    const stream = decisions.watchLog({ workspaceId, fromRevision: 0 });
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stream.cancel();
      if (err) reject(err);
      else resolve({ status, lastFinalAt: performance.now() });
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const open = [...wanted].filter((id) => !status.has(id));
        const named = `${open.slice(0, 10).join(", ")}${open.length > 10 ? ", …" : ""}`;
        finish(
          new Error(
            `nothing became final for ${stallMs} ms: ${status.size} of ${wanted.size} final; not final: ${named}`,
          ),
        );
      }, stallMs);
    };
    arm();
    if (wanted.size === 0) finish();
    stream.on("data", (c: LogChange) => {
      const e = c.entry?.entry;
      if (e?.$case !== "action" || !wanted.has(e.action.id) || !FINAL.has(e.action.status)) return;
      if (status.has(e.action.id)) return;
      status.set(e.action.id, e.action.status);
      arm();
      options.onProgress?.(status.size);
      if (status.size === wanted.size) finish();
    });
    stream.on("error", (err: Error) => {
      if (!done)
        finish(new Error(`WatchLog failed with ${status.size} of ${wanted.size} final: ${err.message}`));
    });
    stream.on("end", () => {
      if (!done) finish(new Error(`WatchLog ended with ${status.size} of ${wanted.size} final`));
    });
  });
}
