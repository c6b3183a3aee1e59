import { type KubeConfig, type V1Pod, Watch } from "@kubernetes/client-node";
import { CONTAINER } from "./template.ts";

/** A pod start that cannot succeed, with the reason Kubernetes gave (the metric label) and its message. */
export class PodStartError extends Error {
  override name = "PodStartError";
  constructor(
    /** Kubernetes' reason (ErrImagePull, ImagePullBackOff, Unschedulable, …) or ours (Timeout, Deleted). */
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Waiting reasons of a container that will not start without someone changing something. */
const FATAL_WAITING = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "ErrImageNeverPull",
  "InvalidImageName",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
  "CrashLoopBackOff",
]);

/**
 * Judges one observed state of a starting sandbox pod: "running" once its container runs, a
 * PodStartError when it cannot get there (a fatal waiting reason, the pod ended, deleted), else null
 * (still starting). Also returns the latest hint for a timeout message (e.g. the scheduler's reason).
 */
export function judgeStartingPod(pod: V1Pod): { verdict: "running" | PodStartError | null; hint: string } {
  const name = pod.metadata?.name ?? "?";
  const status = pod.status;
  const container = status?.containerStatuses?.find((s) => s.name === CONTAINER);
  const waiting = container?.state?.waiting;
  const scheduled = status?.conditions?.find((c) => c.type === "PodScheduled");
  const hint = waiting?.reason
    ? `${waiting.reason}${waiting.message ? `: ${waiting.message}` : ""}`
    : scheduled?.status === "False"
      ? `${scheduled.reason ?? "not scheduled"}${scheduled.message ? `: ${scheduled.message}` : ""}`
      : (status?.phase ?? "Pending");
  if (pod.metadata?.deletionTimestamp)
    return { verdict: new PodStartError("Deleted", `sandbox pod ${name} was deleted while starting`), hint };
  if (status?.phase === "Succeeded" || status?.phase === "Failed") {
    const t = container?.state?.terminated;
    return {
      verdict: new PodStartError(
        t?.reason ?? status.phase,
        `sandbox pod ${name} ended before it was ready (${status.phase}${t ? `, exit code ${t.exitCode}${t.reason ? `, ${t.reason}` : ""}` : ""}${t?.message ? `: ${t.message}` : ""})`,
      ),
      hint,
    };
  }
  if (waiting?.reason && FATAL_WAITING.has(waiting.reason)) {
    return {
      verdict: new PodStartError(
        waiting.reason,
        `sandbox pod ${name} cannot start: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ""}`,
      ),
      hint,
    };
  }
  if (status?.phase === "Running" && container?.state?.running) return { verdict: "running", hint };
  return { verdict: null, hint };
}

/**
 * Waits until the named pod's container runs, watching it through the API server (a watch on that one
 * pod: the first event is its current state).
 * @throws PodStartError with Kubernetes' reason when it cannot start, or reason "Timeout" (naming the
 *   last state seen, e.g. `Unschedulable: 0/1 nodes are available: …`) after `timeoutMs`.
 */
export async function waitForRunning(
  kubeConfig: KubeConfig,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<void> {
  let hint = "no status yet";
  let abort: AbortController | null = null;
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const finish = (error?: Error) => {
        if (settled) return;
        settled = true;
        if (error) reject(error);
        else resolve();
      };
      timer = setTimeout(
        () =>
          finish(
            new PodStartError(
              "Timeout",
              `sandbox pod ${name} did not start within ${timeoutMs} ms (last state: ${hint})`,
            ),
          ),
        timeoutMs,
      );
      const watchOnce = () => {
        new Watch(kubeConfig)
          .watch(
            `/api/v1/namespaces/${namespace}/pods`,
            { fieldSelector: `metadata.name=${name}` },
            (type, pod: V1Pod) => {
              if (type === "DELETED") {
                finish(new PodStartError("Deleted", `sandbox pod ${name} was deleted while starting`));
                return;
              }
              const judged = judgeStartingPod(pod);
              hint = judged.hint;
              if (judged.verdict === "running") finish();
              else if (judged.verdict) finish(judged.verdict);
            },
            // The server ends watches now and then: watch again until settled.
            (error: unknown) => retry(error, 200),
          )
          .then(
            (controller) => {
              abort = controller;
              if (settled) controller.abort();
            },
            (error: unknown) => retry(error, 500),
          );
      };
      /** Watches again after `delayMs`, unless the watch itself is refused (RBAC, credentials). */
      const retry = (error: unknown, delayMs: number) => {
        if (settled) return;
        const status = (error as { statusCode?: unknown } | null)?.statusCode;
        if (status === 401 || status === 403) {
          finish(
            new PodStartError(
              "Forbidden",
              `cannot watch sandbox pod ${name} (HTTP ${status}): the runner's service account needs watch on pods in namespace ${namespace}`,
            ),
          );
          return;
        }
        if (error) hint = `${hint}; watch failed: ${(error as Error).message ?? String(error)}`.slice(-500);
        setTimeout(watchOnce, delayMs).unref();
      };
      watchOnce();
    });
  } finally {
    clearTimeout(timer);
    (abort as AbortController | null)?.abort();
  }
}
