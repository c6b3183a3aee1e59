import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { apiErrorCode, apiErrorMessage } from "./api-error.ts";
import { ALL_SANDBOXES_SELECTOR, LABELS } from "./template.ts";

/** Whose pods a sweep may delete. */
export interface SweepScope {
  namespace: string;
  /** This runner's name: its pods from an earlier process (another runner-instance) are leftovers. */
  runnerName: string;
  /** This process's runner-instance label: its own pods are never swept while they run. */
  runnerInstance: string;
  /** A pod still Pending after this long is abandoned, ms (twice the start timeout). */
  stalePendingMs: number;
  /**
   * Date.now() when this process started (creation timestamps have 1 s resolution: take it 2 s early),
   * or +Infinity for the sweep at start, before this process made any pod.
   */
  startedAt: number;
}

/**
 * Why a sandbox pod is a leftover to delete, or null to keep it:
 * - it ended (Succeeded/Failed): its isolate host exits when its runner's attach stream closes
 *   (stdinOnce), or when no runner attached within the attach deadline, so an ended pod is one whose
 *   runner is gone or gave it up;
 * - this runner made it in an earlier process (same runner name, other instance): nobody holds its stream;
 * - a pod Pending longer than stalePendingMs (its image never pulls, it never schedules): its runner gave
 *   up on it long ago (a failed delete, a runner gone);
 * Running pods of other runners are theirs: never touched.
 */
export function leftoverReason(pod: V1Pod, scope: SweepScope, now = Date.now()): string | null {
  const labels = pod.metadata?.labels ?? {};
  const phase = pod.status?.phase;
  if (pod.metadata?.deletionTimestamp) return null;
  if (phase === "Succeeded" || phase === "Failed") return `ended (${phase})`;
  const created = pod.metadata?.creationTimestamp ? new Date(pod.metadata.creationTimestamp).getTime() : now;
  // Same name, other instance, made before this process started: its earlier process. (Made later:
  // another live process uses this name, a misconfiguration sweepLeftovers reports, not a leftover.)
  if (
    labels[LABELS.runner] === scope.runnerName &&
    labels[LABELS.runnerInstance] !== scope.runnerInstance &&
    created < scope.startedAt
  )
    return "left by an earlier process of this runner";
  // Own pods included: this process waits on a start for half that long at most, then deletes the pod.
  if (phase === "Pending" && now - created > scope.stalePendingMs)
    return `Pending for ${Math.round((now - created) / 1000)} s`;
  return null;
}

/**
 * Deletes every leftover sandbox pod in the namespace (see leftoverReason), logging each
 * (event "sandbox_pod_leftover_deleted"). Returns the names deleted.
 * @throws Error with the API server's message when the pods cannot be listed.
 */
export async function sweepLeftovers(core: CoreV1Api, scope: SweepScope, logger: Logger): Promise<string[]> {
  let pods: V1Pod[];
  try {
    pods = (
      await core.listNamespacedPod({ namespace: scope.namespace, labelSelector: ALL_SANDBOXES_SELECTOR })
    ).items;
  } catch (error) {
    throw new Error(`cannot list sandbox pods in namespace ${scope.namespace}: ${apiErrorMessage(error)}`);
  }
  const deleted: string[] = [];
  for (const pod of pods) {
    const reason = leftoverReason(pod, scope);
    const name = pod.metadata?.name;
    const labels = pod.metadata?.labels ?? {};
    if (
      !reason &&
      labels[LABELS.runner] === scope.runnerName &&
      labels[LABELS.runnerInstance] !== scope.runnerInstance &&
      !pod.metadata?.deletionTimestamp
    ) {
      logger.error(
        { event: "sandbox_runner_name_shared", pod: name, runnerInstance: labels[LABELS.runnerInstance] },
        `another runner process uses the name ${scope.runnerName} (pod ${name}); give each runner its own SANDBOX_K8S_RUNNER_NAME (its pod name)`,
      );
    }
    if (!reason || !name) continue;
    try {
      await core.deleteNamespacedPod({ namespace: scope.namespace, name, gracePeriodSeconds: 0 });
      deleted.push(name);
      logger.info(
        {
          event: "sandbox_pod_leftover_deleted",
          pod: name,
          reason,
          runner: pod.metadata?.labels?.[LABELS.runner],
        },
        `deleted leftover sandbox pod ${name}: ${reason}`,
      );
    } catch (error) {
      if (apiErrorCode(error) !== 404)
        logger.warn(
          { event: "sandbox_pod_delete_failed", pod: name, error: apiErrorMessage(error) },
          "could not delete a leftover sandbox pod",
        );
    }
  }
  return deleted;
}
