/**
 * Waiting for the outcomes of approved actions by watching the workspace stream (an event-store
 * subscription), not Temporal: Approve answers once its actions are final, at its deadline, or
 * once no action of it made progress for a while (no worker runs: the decision stays recorded and
 * applies once one does). While an action is claimed (a worker holds it, perhaps crashing and
 * being replaced), the quiet period does not run: its outcome comes, or the deadline.
 */
import { workspaceStreamId } from "@gatehouse/approval-core";
import type { EventStore } from "@gatehouse/event-store";

/** Event types that end an action. */
const FINAL = new Set(["ActionApplied", "ActionApplyFailed", "ActionRejected"]);
/** Event types that show an action progressing. */
const PROGRESS = new Set(["ActionApplying", "ActionClaimReleased", ...FINAL]);

/** Options of waitForOutcomes. */
export interface OutcomeWaitOptions {
  /** Give up at this time (ms since the epoch), e.g. the request's deadline. */
  deadlineMs: number;
  /** Give up once none of the actions progressed, and none is claimed, for this long, ms. */
  quietMs: number;
}

/**
 * Resolves once every id in `actionIds` has a final event after `afterRevision`, or when the
 * deadline or the quiet period passes (resolves either way; read the records afterwards).
 */
export async function waitForOutcomes(
  store: EventStore,
  workspaceId: string,
  afterRevision: number,
  actionIds: Iterable<number>,
  options: OutcomeWaitOptions,
): Promise<void> {
  const open = new Set(actionIds);
  if (open.size === 0) return;
  await new Promise<void>((resolve) => {
    let quiet: NodeJS.Timeout | undefined;
    const claimed = new Set<number>();
    const done = () => {
      clearTimeout(quiet);
      clearTimeout(deadline);
      void sub.close().catch(() => undefined);
      resolve();
    };
    const progressed = () => {
      clearTimeout(quiet);
      if (claimed.size === 0) quiet = setTimeout(done, options.quietMs);
    };
    const deadline = setTimeout(done, Math.max(0, options.deadlineMs - Date.now()));
    progressed();
    const sub = store.subscribeToStream(workspaceStreamId(workspaceId), {
      after: afterRevision,
      onEvent: (e) => {
        if (!PROGRESS.has(e.type)) return;
        const id = (e.data as { actionId?: number }).actionId;
        if (id === undefined || !open.has(id)) return;
        if (e.type === "ActionApplying") claimed.add(id);
        else claimed.delete(id);
        if (FINAL.has(e.type)) open.delete(id);
        progressed();
        if (open.size === 0) done();
      },
      onError: () => done(),
    });
  });
}
