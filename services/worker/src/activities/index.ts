/**
 * `createLifecycleActivities`: the activities the lifecycle workflows call (types in
 * `../workflows/activity-api.ts`), each timed into the worker's activity-latency histogram.
 */

import { instrumentActivities } from "../metrics.ts";
import type { LifecycleActivities, LifecycleLocalActivities } from "../workflows/activity-api.ts";
import type { ActivityDeps } from "./deps.ts";
import { noticeActivities } from "./notices.ts";
import { runActivities } from "./run.ts";
import { turnActivities } from "./turns.ts";

export type { ActivityDeps } from "./deps.ts";

/** Every activity of the worker (remote and local), instrumented with latency metrics. */
export function createLifecycleActivities(
  deps: ActivityDeps,
): LifecycleActivities & LifecycleLocalActivities {
  const activities: LifecycleActivities & LifecycleLocalActivities = {
    ...runActivities(deps),
    ...noticeActivities(deps),
    ...turnActivities(deps),
    async observeWorkflowEnd({ workflow, outcome, startedAtMs }): Promise<void> {
      deps.metrics.workflowSeconds.observe(
        { workflow, outcome },
        Math.max(0, Date.now() - startedAtMs) / 1000,
      );
    },
  };
  return instrumentActivities(activities, deps.metrics);
}
