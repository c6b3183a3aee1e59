/**
 * Rebuilds a binding's overlay after the gatekeeper restarted: the approval service still holds
 * every write of the binding that is not applied, failed or rejected, with its staged payload, in
 * submission order (`ListUnappliedForCaller`). They rejoin the overlay with their dependencies, so
 * reads replay them again, and every local id the binding used is reserved. Reverts a person
 * staged (`implementsRevert`) stay out of the overlay. Runs once per binding per process.
 */
import type { ApprovalQueue } from "@gatehouse/gatekeeper-kit";
import { parsePayload } from "./apply.ts";
import type { BindingState } from "./state.ts";

/** Restores `state` once; later calls wait for the first. @throws ApprovalRefused. */
export function restoreOnce(
  state: BindingState,
  approval: ApprovalQueue,
  callerToken: string,
): Promise<void> {
  state.restored ??= restore(state, approval, callerToken).catch((e: unknown) => {
    state.restored = undefined;
    throw e;
  });
  return state.restored;
}

async function restore(state: BindingState, approval: ApprovalQueue, callerToken: string): Promise<void> {
  const { actions, usedLocalIds } = await approval.listUnappliedForCaller(callerToken);
  for (const id of usedLocalIds) state.ids.reserve(id);
  const localOf = new Map(actions.map((u) => [u.action?.id ?? 0, u.action?.localId ?? ""]));
  for (const u of actions) {
    const a = u.action;
    if (!a || a.description?.implementsRevert || state.overlay.has(a.localId)) continue;
    let p: ReturnType<typeof parsePayload>;
    try {
      p = parsePayload(u.payloadJson);
    } catch {
      continue;
    }
    if (p.kind !== "write") continue;
    const deps = a.dependsOn
      .map((d) => localOf.get(d))
      .filter((l): l is string => !!l && state.overlay.has(l));
    state.overlay.add(a.localId, { ...p, localId: a.localId }, deps);
  }
}
