/**
 * Which approved actions of a binding the next batch apply may claim (docs/architecture.md
 * "Temporal's part": a batch applies in submission order). Pure: the lifecycle worker appends the claims this plans.
 */
import { ActionStatus } from "@gatehouse/proto";
import { CASCADE_ACTOR, cascadeReason, cascadeRejections } from "./cascade.ts";
import type { ClaimRun } from "./commands.ts";
import { InvalidField } from "./errors.ts";
import { type PlannedEvent, planned } from "./events.ts";
import type { ActionState, WorkspaceState } from "./state.ts";

/** The rejected or failed dependency of `a`, or undefined when none is. */
export function deadDependency(state: WorkspaceState, a: ActionState): number | undefined {
  return a.dependsOn.find((d) => {
    const s = state.actions.get(d)?.status;
    return s === ActionStatus.ACTION_STATUS_REJECTED || s === ActionStatus.ACTION_STATUS_FAILED;
  });
}

/** The next run of a binding. */
export interface RunPlan {
  /** Actions to claim, in submission order: APPROVED, of the binding's current grant, every dependency applied or earlier in the run. */
  run: ActionState[];
  /**
   * APPROVED actions of the binding that can never apply, in submission order: a dependency was
   * rejected or failed, or is itself listed here earlier. To cascade.
   */
  dead: number[];
  /** True when the run stopped at an action waiting for a dependency not applied yet (it is not claimable yet). */
  blocked: boolean;
}

/**
 * Plans the next run of `binding`: walks its APPROVED actions in submission order, taking each
 * whose dependencies are applied or taken earlier in this run, up to `max`; stops at the first
 * one that must wait (a dependency approved but not applied, e.g. in another binding) so later
 * actions never overtake it. Approved actions with a rejected or failed dependency, or one listed
 * dead earlier in the walk, are listed in `dead` and do not stop the walk. Actions of a removed grant are skipped (the removal rejected them).
 */
export function planRun(state: WorkspaceState, binding: string, max: number): RunPlan {
  const grant = state.bindings.get(binding)?.grant;
  const run: ActionState[] = [];
  const dead: number[] = [];
  const taken = new Set<number>();
  const deadSet = new Set<number>();
  for (const a of state.actions.values()) {
    if (a.binding !== binding || a.status !== ActionStatus.ACTION_STATUS_APPROVED) continue;
    if (grant === undefined || a.grant !== grant) continue;
    // Dead too when it needs an approved action found dead earlier in this walk (transitively):
    // otherwise it would wait for that one forever and block the binding.
    if (deadDependency(state, a) !== undefined || a.dependsOn.some((d) => deadSet.has(d))) {
      dead.push(a.id);
      deadSet.add(a.id);
      continue;
    }
    const ready = a.dependsOn.every(
      (d) => taken.has(d) || state.actions.get(d)?.status === ActionStatus.ACTION_STATUS_APPLIED,
    );
    if (!ready) return { run, dead, blocked: true };
    if (run.length >= max) break;
    run.push(a);
    taken.add(a.id);
  }
  return { run, dead, blocked: false };
}

/** Ids of the binding's actions holding an apply claim (APPLYING), in submission order. */
export function claimedActions(state: WorkspaceState, binding: string): ActionState[] {
  return [...state.actions.values()].filter(
    (a) => a.binding === binding && a.status === ActionStatus.ACTION_STATUS_APPLYING,
  );
}

/** Actor of the claims the worker appends. */
const CLAIM_ACTOR = "service:approval";

/** The ClaimRun decision (see the command): dead approved actions cascaded, then the run's claims. */
export function claimRun(c: ClaimRun, state: WorkspaceState): PlannedEvent[] {
  if (!Number.isInteger(c.max) || c.max < 1) throw new InvalidField("max", "claim at least 1 action per run");
  if (!c.claimedBy) throw new InvalidField("claimed_by", "say which process claims the run");
  const plan = planRun(state, c.binding, c.max);
  const events: PlannedEvent[] = [];
  const rejected = new Set<number>();
  for (const id of plan.dead) {
    const a = state.actions.get(id) as ActionState;
    // The dependency that did not complete: in the state, or rejected just above (transitively).
    const dead = (deadDependency(state, a) ?? a.dependsOn.find((d) => rejected.has(d))) as number;
    rejected.add(id);
    events.push(
      planned(
        "ActionRejected",
        { actionId: id, decidedBy: CASCADE_ACTOR, reason: cascadeReason(dead), cascadedFrom: dead },
        CASCADE_ACTOR,
      ),
    );
  }
  if (plan.dead.length > 0) {
    for (const e of cascadeRejections(state, plan.dead)) {
      const id = (e.data as { actionId: number }).actionId;
      if (!rejected.has(id)) events.push(e);
    }
  }
  for (const a of plan.run) {
    events.push(planned("ActionApplying", { actionId: a.id, claimedBy: c.claimedBy }, CLAIM_ACTOR));
  }
  return events;
}
