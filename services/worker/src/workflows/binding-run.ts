/**
 * The binding-run workflow (id `bindingRunWorkflowId(workspaceId, binding)`, contract in
 * @gatehouse/approval-core/lifecycle-contract): one per binding, started by signal-with-start
 * whenever an action of the binding may be claimable. It loops — claim the next run of approved
 * actions and apply it through one ApplyActions call (an activity), announce what became final
 * (alongside the next run),
 * wake bindings whose dependencies were applied — until nothing is claimable, then waits for a
 * signal; idle for `idleMs`, it completes (the next signal-with-start starts it again). It
 * continues as new before its history grows large. Deterministic: no I/O here.
 */
import {
  BINDING_RUN_WORKFLOW,
  type BindingRunInput,
  bindingRunAnnounceSignal,
  bindingRunWakeSignal,
  DEFAULT_APPLY_RUN_MAX,
  DEFAULT_BINDING_RUN_IDLE_MS,
} from "@gatehouse/approval-core/lifecycle-contract";
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  workflowInfo,
} from "@temporalio/workflow";
import type { LifecycleActivities, LifecycleLocalActivities, RunReport } from "./activity-api.ts";
import { APPLY_RUN_ACTIVITY, METRICS_LOCAL_ACTIVITY, NOTICE_ACTIVITY } from "./activity-options.ts";

const runs = proxyActivities<LifecycleActivities>(APPLY_RUN_ACTIVITY);
const notices = proxyActivities<LifecycleActivities>(NOTICE_ACTIVITY);
const local = proxyLocalActivities<LifecycleLocalActivities>(METRICS_LOCAL_ACTIVITY);

/** Runs per workflow execution before it continues as new (bounds its history). */
const RUNS_PER_EXECUTION = 200;

/** patched() id: a run's announcement no longer holds up the next run. */
const ANNOUNCE_ALONGSIDE_RUNS = "announce-alongside-runs";

/** Pause after a run activity failed for good (store down), before trying again, ms. */
const RETRY_PAUSE_MS = 30_000;

/** Workflow `bindingRun`. Completes after `idleMs` without work. */
export async function bindingRun(input: BindingRunInput): Promise<void> {
  const { workspaceId, binding } = input;
  const runMax = input.runMax ?? DEFAULT_APPLY_RUN_MAX;
  const idleMs = input.idleMs ?? DEFAULT_BINDING_RUN_IDLE_MS;
  const startedAtMs = workflowInfo().startTime.getTime();
  const pending: number[] = [...(input.announce ?? [])];
  let woken = true; // started by a wake (or a continue-as-new): claim at once
  setHandler(bindingRunWakeSignal, () => {
    woken = true;
  });
  setHandler(bindingRunAnnounceSignal, ({ actionIds }) => {
    pending.push(...actionIds);
  });

  const drain = async () => {
    while (pending.length > 0) {
      const actionIds = pending.splice(0);
      try {
        await notices.announce({ workspaceId, actionIds });
      } catch {
        log.warn("announcements were not delivered", { workspaceId, count: actionIds.length });
      }
    }
  };
  // Announcements run one after another (a root before the rejections it cascaded); since
  // ANNOUNCE_ALONGSIDE_RUNS, a run's announcement goes on while the next run is claimed and applied
  // (before it, the next run waited for it: an activity round trip between every two runs).
  const alongside = patched(ANNOUNCE_ALONGSIDE_RUNS);
  let announcing: Promise<void> = Promise.resolve();
  const announce = (): Promise<void> => {
    announcing = announcing.then(drain);
    return announcing;
  };

  for (let n = 1; ; ) {
    await announce();
    if (!woken) {
      const signalled = await condition(() => woken || pending.length > 0, idleMs);
      if (!signalled) break;
      continue;
    }
    woken = false;
    for (; n <= RUNS_PER_EXECUTION; n++) {
      let report: RunReport;
      try {
        report = await runs.applyNextRun({
          workspaceId,
          binding,
          runMax,
          runKey: `${workflowInfo().workflowId}/${workflowInfo().runId}/run-${n}`,
        });
      } catch (err) {
        log.warn("a run failed; trying again later", { workspaceId, binding, error: (err as Error).message });
        await sleep(RETRY_PAUSE_MS);
        woken = true;
        n++;
        break;
      }
      pending.push(...report.announce);
      if (report.wake.length > 0) {
        await notices.wakeBindings({ workspaceId, bindings: report.wake }).catch(() => {
          log.warn("bindings were not woken", { workspaceId, bindings: report.wake });
        });
      }
      if (alongside) void announce();
      else await announce();
      // `more` with nothing claimed: the claim only cascaded dead actions; what they blocked is next.
      if (!report.more) break;
    }
    if (n > RUNS_PER_EXECUTION || workflowInfo().continueAsNewSuggested) {
      if (alongside) await announce(); // the one in flight ends in this execution
      await condition(allHandlersFinished);
      await continueAsNew<typeof bindingRun>({ ...input, announce: pending.splice(0) });
    }
  }
  await local.observeWorkflowEnd({ workflow: BINDING_RUN_WORKFLOW, outcome: "idle", startedAtMs });
  await condition(allHandlersFinished);
}
