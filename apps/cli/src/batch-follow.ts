/**
 * Following a batch approval to its end: records the approvals with `Decisions.ApproveBatch` (or,
 * for one id with its undecided dependencies, `Decisions.Approve` with `include_dependencies`;
 * `return_once_recorded: true` either way, so the call returns before the applies; a service that
 * ignores the flag answers after them, which works too), and follows each approved action's outcome through
 * `Decisions.WatchLog` until every one is final (applied, failed or rejected, its cascades
 * included). There is no overall deadline: the batch may take as long as the service keeps making
 * progress. It ends early only when nothing happens to the batch for `stallMs` (a stall: no worker,
 * a gatekeeper hanging, the approval service gone), when `signal` aborts (Ctrl-C: the approvals
 * already recorded stay recorded and apply on the server), or on an error of the approve call itself.
 */
import {
  type ActionRecord,
  ActionStatus,
  type DecisionResponse,
  type DecisionsClient,
  type LogChange,
} from "@gatehouse/proto";
import { type ClientReadableStream, type ClientUnaryCall, type ServiceError, status } from "@grpc/grpc-js";

/** How far a batch is: numbers of actions (`approved` is the batch's size as known so far). */
export interface BatchCounts {
  /** Actions in the batch: approved now, plus actions rejected by their cascades. */
  approved: number;
  applied: number;
  /** Failed with a known outcome (the gatekeeper answered with an error). */
  failed: number;
  /**
   * Failed because the apply's answer was lost (`outcome_unknown`: a connection cut, a timeout, a
   * crash after the request may have been sent): the external effect may or
   * may not have happened. Counted apart from `failed`; both are in state failed.
   */
  outcomeUnknown: number;
  /** Rejected since (a cascade from a failed dependency, or a person's rejection racing the approval). */
  rejected: number;
  /** Milliseconds since the batch started. */
  elapsedMs: number;
}

/** How a followed batch ended. */
export interface BatchResult {
  counts: BatchCounts;
  /** The latest record of every action of the batch, by id (submission order when sorted). */
  records: Map<number, ActionRecord>;
  /** True when it ended because nothing happened for `stallMs`; some actions are not final then. */
  stalled: boolean;
  /** True when it ended because `signal` aborted (Ctrl-C); some actions may not be final then. */
  interrupted: boolean;
  /** Whether the approve call had answered (the approvals are recorded). */
  recorded: boolean;
}

export interface FollowOptions {
  decisions: DecisionsClient;
  workspaceId: string;
  /** The ids to approve; empty with `all`; exactly one with `includeDependencies`. */
  actionIds: number[];
  all: boolean;
  /**
   * Also approve the undecided actions the one id depends on (transitively): the approvals are
   * recorded with `Decisions.Approve` (include_dependencies), and the dependencies it approved join
   * the batch when it answers.
   */
  includeDependencies?: boolean;
  decidedBy: string;
  /**
   * The ids expected in the batch, to count against before the approve call answers: `actionIds`,
   * or with `all` the pending ones just listed. The smallest is where the watch starts.
   */
  expected: number[];
  /** End as stalled after this long without any change to the batch, ms. */
  stallMs: number;
  /** Called after every change (often: throttle rendering). */
  onProgress(counts: BatchCounts): void;
  /** Ends the follow at once as `interrupted` (the approve call, if still under way, is cancelled). */
  signal?: AbortSignal;
  /**
   * Action id → the description digest (ActionRecord.descriptionDigest) of the record the person
   * was shown, one per id approved: the service refuses the whole batch (FAILED_PRECONDITION naming
   * the action, nothing approved) when one is not the stored description's. Absent or empty: the
   * approvals are not bound to a description (`gatehouse approve`, which shows none).
   */
  descriptionDigests?: Record<number, string>;
}

const FINAL = new Set([
  ActionStatus.ACTION_STATUS_APPLIED,
  ActionStatus.ACTION_STATUS_FAILED,
  ActionStatus.ACTION_STATUS_REJECTED,
]);

/** Watch errors worth resubscribing after (the service restarting, a dropped connection). */
const TRANSIENT = new Set([status.UNAVAILABLE, status.INTERNAL, status.UNKNOWN, status.DEADLINE_EXCEEDED]);

/**
 * Approves and follows the batch (see the module comment). Resolves `interrupted` at once when
 * `signal` aborts, `stalled` after `stallMs` without a change.
 * @throws the approve call's ServiceError (nothing is followed then), or a watch error that is not
 * transient (e.g. NOT_FOUND for an unknown workspace).
 */
export function followBatch(o: FollowOptions): Promise<BatchResult> {
  const started = Date.now();
  const records = new Map<number, ActionRecord>();
  /**
   * The latest record of actions the watch delivered before they were known to be in the batch
   * (dependencies approved with the one id, pending ones `all` found that the list missed): taken
   * when the approve call's answer puts them in the batch, so an outcome seen before it is not lost.
   */
  const outside = new Map<number, ActionRecord>();
  /** Ids in the batch; before the approve call answers, the expected ones. */
  let batch = new Set(o.expected);
  let recorded = false;
  let lastRevision = Math.max(0, Math.min(...o.expected, Number.MAX_SAFE_INTEGER)) - 1;
  let stream: ClientReadableStream<LogChange> | undefined;
  let approving: ClientUnaryCall | undefined;
  let stallTimer: NodeJS.Timeout | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let settled = false;

  const counts = (): BatchCounts => {
    const c: BatchCounts = {
      approved: batch.size,
      applied: 0,
      failed: 0,
      outcomeUnknown: 0,
      rejected: 0,
      elapsedMs: 0,
    };
    for (const id of batch) {
      const a = records.get(id);
      if (a?.status === ActionStatus.ACTION_STATUS_APPLIED) c.applied++;
      else if (a?.status === ActionStatus.ACTION_STATUS_FAILED) {
        if (a.outcomeUnknown) c.outcomeUnknown++;
        else c.failed++;
      } else if (a?.status === ActionStatus.ACTION_STATUS_REJECTED) c.rejected++;
    }
    c.elapsedMs = Date.now() - started;
    return c;
  };

  return new Promise<BatchResult>((resolve, reject) => {
    const finish = (stalled: boolean, err?: unknown, interrupted = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(stallTimer);
      clearTimeout(retryTimer);
      o.signal?.removeEventListener("abort", onAbort);
      stream?.cancel();
      approving?.cancel();
      if (err) reject(err);
      else resolve({ counts: counts(), records, stalled, interrupted, recorded });
    };
    const onAbort = () => finish(false, undefined, true);
    const armStall = () => {
      clearTimeout(stallTimer);
      stallTimer = setTimeout(() => finish(true), o.stallMs);
    };
    let closing = false;
    const progressed = () => {
      armStall();
      const c = counts();
      o.onProgress(c);
      if (!recorded || closing || c.applied + c.failed + c.outcomeUnknown + c.rejected !== c.approved) return;
      if (c.failed + c.outcomeUnknown + c.rejected === 0) return finish(false);
      // A failure's or rejection's cascade is appended with it, but the watch may deliver it after
      // this point: read the actions once, so the batch ends with every action it cascaded to.
      closing = true;
      o.decisions.listActions({ workspaceId: o.workspaceId, pendingOnly: false }, (_err, res) => {
        if (settled) return;
        for (const a of [...(res?.actions ?? [])].sort((x, y) => x.id - y.id)) take(a);
        finish(false);
      });
    };
    const take = (a: ActionRecord) => {
      // A cascade from an action of the batch joins the batch (as rejected).
      if (!batch.has(a.id) && !(a.cascadedFrom && batch.has(a.cascadedFrom))) {
        if (!recorded) {
          const had = outside.get(a.id);
          if (!had || a.lastRevision >= had.lastRevision) outside.set(a.id, a);
        }
        return false;
      }
      batch.add(a.id);
      const had = records.get(a.id);
      // Keep the most recent record (the approve call's answer may come after changes the watch
      // delivered); a final state is never replaced by an earlier one.
      if (had && FINAL.has(had.status) && !FINAL.has(a.status)) return true;
      if (!had || a.lastRevision >= had.lastRevision || FINAL.has(a.status)) records.set(a.id, a);
      return true;
    };
    const watch = () => {
      const s = o.decisions.watchLog({ workspaceId: o.workspaceId, fromRevision: lastRevision + 1 });
      stream = s;
      s.on("data", (change: LogChange) => {
        lastRevision = Math.max(lastRevision, change.revision);
        const entry = change.entry?.entry;
        if (entry?.$case === "action" && take(entry.action)) progressed();
      });
      // The approval service went away (restarting?): subscribe again from where this one stopped;
      // the stall timer still bounds how long nothing may happen. Once per stream.
      const again = () => {
        if (settled || stream !== s) return;
        stream = undefined;
        retryTimer = setTimeout(watch, 1000);
      };
      s.on("error", (err: ServiceError) => {
        if (settled) return;
        // This process cancels its watch only once settled: a CANCELLED here is the server's (a
        // graceful shutdown of the approval service), as transient as UNAVAILABLE.
        if (!TRANSIENT.has(err.code) && err.code !== status.CANCELLED) return finish(false, err);
        again();
      });
      s.on("end", again);
    };

    if (o.signal?.aborted) return finish(false, undefined, true);
    o.signal?.addEventListener("abort", onAbort);
    armStall();
    watch();
    // No deadline: a service that ignores return_once_recorded answers after every apply; the stall
    // timer bounds the wait instead. Kept to be cancelled when the follow ends first.
    const answered = (err: ServiceError | null, res?: DecisionResponse) => {
      if (settled) return;
      if (err || !res) return finish(false, err);
      // The batch is what the service approved (and cascaded); changes seen for expected ids it did
      // not approve (decided meanwhile) are dropped, cascades seen from the approved ones kept.
      batch = new Set(res.actions.map((a) => a.id));
      for (const [id, a] of records) {
        if (batch.has(id) || (a.cascadedFrom && batch.has(a.cascadedFrom))) batch.add(id);
        else records.delete(id);
      }
      for (const a of res.actions) take(a);
      for (const a of outside.values()) take(a);
      outside.clear();
      recorded = true;
      progressed();
    };
    const digests = o.descriptionDigests ?? {};
    approving = o.includeDependencies
      ? o.decisions.approve(
          {
            workspaceId: o.workspaceId,
            actionId: o.actionIds[0] ?? 0,
            decidedBy: o.decidedBy,
            includeDependencies: true,
            returnOnceRecorded: true,
            descriptionDigests: digests,
          },
          answered,
        )
      : o.decisions.approveBatch(
          {
            workspaceId: o.workspaceId,
            actionIds: o.actionIds,
            decidedBy: o.decidedBy,
            all: o.all,
            returnOnceRecorded: true,
            descriptionDigests: digests,
          },
          answered,
        );
  });
}
