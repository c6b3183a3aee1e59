/** The pods of an installed release on the local cluster, by component, and a wait until each is Ready. */
import { kubectl, kubectlOk, waitFor } from "./cluster.ts";
import { COMPONENTS } from "./helm.ts";

/** One pod of a release (not terminating, not a helm test pod). */
export interface ReleasePod {
  /** Its app.kubernetes.io/component label, e.g. "sandbox-runner". */
  component: string;
  name: string;
  uid: string;
  /** Its Ready condition is True. */
  ready: boolean;
  /** status.phase: Pending, Running, … */
  phase: string;
}

/** The release's pods in `namespace` (terminating and helm test pods left out). */
export async function releasePods(namespace: string, release: string): Promise<ReleasePod[]> {
  const out = await kubectlOk([
    "-n",
    namespace,
    "get",
    "pods",
    "-l",
    `app.kubernetes.io/instance=${release}`,
    "-o",
    "json",
  ]);
  type Pod = {
    metadata: { name: string; uid: string; labels: Record<string, string>; deletionTimestamp?: string };
    status: { phase: string; conditions?: { type: string; status: string }[] };
  };
  return (JSON.parse(out).items as Pod[])
    .filter(
      (p) => !p.metadata.deletionTimestamp && p.metadata.labels["app.kubernetes.io/component"] !== "test",
    )
    .map((p) => ({
      component: p.metadata.labels["app.kubernetes.io/component"] ?? "",
      name: p.metadata.name,
      uid: p.metadata.uid,
      phase: p.status.phase,
      ready: (p.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
    }));
}

/**
 * Waits until each component has exactly one Ready pod (none terminating).
 * @returns each component's pod uid.
 * @throws Error with the namespace's pods, events and the end of `kubectl describe pods` at the deadline.
 */
export async function allReady(
  namespace: string,
  release: string,
  timeoutMs: number,
): Promise<Map<string, string>> {
  return waitFor(
    "every component's pod Ready",
    async () => {
      const list = await releasePods(namespace, release);
      const ready = new Map(list.filter((p) => p.ready).map((p) => [p.component, p.uid]));
      return COMPONENTS.every((c) => ready.has(c)) && list.length === COMPONENTS.length ? ready : undefined;
    },
    timeoutMs,
    async () =>
      (await kubectl(["-n", namespace, "get", "pods,events", "-o", "wide"])).stdout +
      (await kubectl(["-n", namespace, "describe", "pods"])).stdout.slice(-6000),
  );
}
