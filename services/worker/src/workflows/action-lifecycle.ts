/**
 * The action lifecycle workflow (DESIGN.md "Approval semantics", "Orchestration"): waits for one
 * decision (update, signal, cascade or expiry), records it through an activity, applies an approved
 * action at most once, records the outcome, then propagates rejections/failures to the dependents'
 * workflows and to the gatekeepers, and tells an awaiting turn. Deterministic: no I/O here.
 */
import {
  ACTION_WORKFLOW,
  type ActionWorkflowInput,
  actionStatusQuery,
  actionWorkflowId,
  cascadedSignal,
  type Decision,
  type DecisionOutcome,
  decideSignal,
  decideUpdate,
} from "@gatehouse/approval-core/lifecycle-contract";
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from "@temporalio/workflow";
import type {
  ActionSnapshot,
  ApplyResult,
  LifecycleActivities,
  LifecycleLocalActivities,
} from "./activity-api.ts";
import {
  APPLY_ACTIVITY,
  METRICS_LOCAL_ACTIVITY,
  NOTICE_ACTIVITY,
  STREAM_LOCAL_ACTIVITY,
} from "./activity-options.ts";
import {
  alreadyDecidedMessage,
  EXPIRY_ACTOR,
  EXPIRY_REASON,
  isFinal,
  outcomeOf,
  type RecordedDecision,
  recordedDecisionOf,
} from "./outcome.ts";

const stream = proxyLocalActivities<LifecycleActivities>(STREAM_LOCAL_ACTIVITY);
const apply = proxyActivities<LifecycleActivities>(APPLY_ACTIVITY);
const notices = proxyActivities<LifecycleActivities>(NOTICE_ACTIVITY);
const local = proxyLocalActivities<LifecycleLocalActivities>(METRICS_LOCAL_ACTIVITY);

interface Queued {
  seq: number;
  decision: Decision;
}

/** Refuses malformed decisions before they are queued (the message names the field). */
function validateDecision(d: Decision): void {
  if (!d || (d.kind !== "approve" && d.kind !== "reject")) {
    throw new Error('decision.kind: must be "approve" or "reject"');
  }
  if (!d.decidedBy) throw new Error('decision.decidedBy: say who decides, e.g. "user:alice"');
  if (d.kind === "reject" && !d.reason?.trim()) {
    throw new Error("decision.reason: a rejection needs a reason (it is shown to the agent and in the log)");
  }
}

/**
 * Workflow `actionLifecycle` (id `actionWorkflowId(workspaceId, actionId)`).
 * @returns the action's final outcome.
 * @throws (fails the workflow) when an approved action can never be claimed, e.g. a dependency
 *   it needs was rejected after this action was approved.
 */
export async function actionLifecycle(input: ActionWorkflowInput): Promise<DecisionOutcome> {
  const ref = { workspaceId: input.workspaceId, actionId: input.actionId };
  const startedAtMs = workflowInfo().startTime.getTime();
  let phase = "waiting";
  let recorded: RecordedDecision | undefined;
  let final: DecisionOutcome | undefined;
  let cascadedFrom: number | undefined;
  const queue: Queued[] = [];
  const refusals = new Map<number, string>();
  let nextSeq = 1;

  setHandler(
    decideUpdate,
    async (decision) => {
      const seq = nextSeq++;
      queue.push({ seq, decision });
      await condition(() => final !== undefined || refusals.has(seq));
      const refusal = refusals.get(seq);
      if (refusal !== undefined) throw ApplicationFailure.nonRetryable(refusal, "DecisionRefused");
      return final as DecisionOutcome;
    },
    {
      validator: (decision) => {
        if (recorded) throw new Error(alreadyDecidedMessage(ref.actionId, recorded));
        validateDecision(decision);
      },
    },
  );
  setHandler(decideSignal, (decision) => {
    if (recorded) {
      log.info("decision signal ignored: already decided", { actionId: ref.actionId });
      return;
    }
    try {
      validateDecision(decision);
    } catch (err) {
      log.warn("decision signal ignored: malformed", { error: (err as Error).message });
      return;
    }
    queue.push({ seq: nextSeq++, decision });
  });
  setHandler(cascadedSignal, (s) => {
    cascadedFrom ??= s.cascadedFrom;
  });
  setHandler(actionStatusQuery, () => final?.status ?? phase);

  let snap = await stream.readAction(ref);
  /** True when this run appended the rejection or failure (so it owns the cascade's propagation). */
  let ownsEnd = false;
  if (snap.status === "pending") {
    const deadline = snap.submittedAtMs + input.ttlMs;
    while (snap.status === "pending") {
      const remaining = deadline - Date.now();
      const woke =
        remaining > 0 && (await condition(() => queue.length > 0 || cascadedFrom !== undefined, remaining));
      if (woke && cascadedFrom !== undefined) {
        // A dependency's activity appended our rejection — or, with cascadedFrom 0, the removal of
        // our binding did: then this rejection is a root and this run propagates it (turn first).
        snap = await stream.readAction(ref);
        ownsEnd = cascadedFrom === 0 && snap.status === "rejected";
        cascadedFrom = undefined;
        continue;
      }
      const q = woke ? queue.shift() : undefined;
      const decision: Decision = q
        ? q.decision
        : { kind: "reject", decidedBy: EXPIRY_ACTOR, reason: EXPIRY_REASON };
      const result =
        decision.kind === "approve"
          ? await stream.recordApproval({ ...ref, decidedBy: decision.decidedBy })
          : await stream.recordRejection({ ...ref, decidedBy: decision.decidedBy, reason: decision.reason });
      snap = result.snapshot;
      if (!result.recorded) {
        if (q) refusals.set(q.seq, result.message);
        else if (snap.status === "pending") {
          throw ApplicationFailure.nonRetryable(`expiry refused: ${result.message}`, "ExpiryRefused");
        }
        continue;
      }
      ownsEnd = decision.kind === "reject";
    }
  }
  recorded = recordedDecisionOf(snap);
  for (const q of queue.splice(0)) {
    refusals.set(q.seq, alreadyDecidedMessage(ref.actionId, recorded as RecordedDecision));
  }

  if (snap.status === "approved" || snap.status === "applying") {
    phase = "applying";
    let result: ApplyResult | undefined;
    try {
      result = await apply.applyAction(ref);
    } catch (err) {
      // Rejected before its apply was claimed (its binding was removed: Kernel.RemoveBinding rejects
      // the binding's unsent actions): nothing was sent; end rejected and propagate it.
      snap = await stream.readAction(ref);
      ownsEnd = snap.status === "rejected";
      if (!ownsEnd) {
        throw ApplicationFailure.nonRetryable(
          `action ${ref.actionId} could not be applied: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`,
          "ApplyNotPossible",
        );
      }
    }
    if (result) {
      snap = await stream.recordOutcome({ ...ref, result });
      ownsEnd = snap.status === "failed";
    }
  }
  if (!isFinal(snap.status)) {
    throw ApplicationFailure.nonRetryable(
      `action ${ref.actionId} ended in status ${snap.status}`,
      "UnexpectedStatus",
    );
  }
  final = outcomeOf(snap as ActionSnapshot & { status: typeof snap.status });
  phase = final.status;

  // Tell an awaiting turn first, then cascade: the turn hears the root rejection before the
  // rejections it causes, so it names the person's reason rather than "needed action N".
  if (snap.awaited) {
    await notices.signalTurn({
      workspaceId: ref.workspaceId,
      turnId: snap.executionId,
      result: {
        actionId: ref.actionId,
        status: final.status,
        ...(snap.reason ? { reason: snap.reason } : {}),
        ...(snap.resultJson ? { resultJson: snap.resultJson } : {}),
      },
    });
  }
  // The removal's wake arrived while this run was not waiting for a decision (e.g. it found the
  // rejection at its first read): the rejection is still a root this run propagates.
  if (cascadedFrom === 0 && snap.status === "rejected") ownsEnd = true;
  if (ownsEnd) await propagate(ref.workspaceId, ref.actionId, snap);
  await local.observeWorkflowEnd({ workflow: ACTION_WORKFLOW, outcome: final.status, startedAtMs });
  await condition(allHandlersFinished);
  return final;
}

/** Signals the cascaded actions' workflows (missing ones are skipped) and notifies the gatekeepers. */
async function propagate(workspaceId: string, actionId: number, snap: ActionSnapshot): Promise<void> {
  await Promise.all(
    snap.cascaded.map((id) =>
      getExternalWorkflowHandle(actionWorkflowId(workspaceId, id))
        .signal(cascadedSignal, { cascadedFrom: actionId })
        .catch(() => undefined),
    ),
  );
  const rejected = snap.status === "rejected" ? [actionId, ...snap.cascaded] : snap.cascaded;
  if (rejected.length > 0) {
    try {
      await notices.notifyRejected({ workspaceId, actionIds: rejected });
    } catch {
      log.warn("reject notices were not delivered", { actionId });
    }
  }
}
