/**
 * Rebuilds a binding's overlay after the gatekeeper restarted: the approval service still holds
 * every write of the binding that is not applied, failed or rejected, with its staged payload, in
 * submission order (`ListUnappliedForCaller`). They rejoin the overlay with their dependencies,
 * so reads show them again, and every local id the binding used is reserved, so a new write never
 * reuses one. Runs once per binding per process, at the first session. Reverts a person staged
 * (`implementsRevert`) are not agent writes and stay out of the overlay, as when they were staged.
 */
import type { ApprovalQueue } from "@gatehouse/gatekeeper-kit";
import { parseWritePayload } from "./apply.ts";
import type { BindingState, PendingGitWrite } from "./state.ts";

/** Restores `state` from the approval service once; later calls wait for the first. @throws ApprovalRefused. */
export function restoreOnce(
  state: BindingState,
  approval: ApprovalQueue,
  callerToken: string,
): Promise<void> {
  state.restored ??= restore(state, approval, callerToken).catch((e: unknown) => {
    state.restored = undefined; // try again at the next session
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
    let write: PendingGitWrite;
    try {
      write = { ...parseWritePayload(u.payloadJson), localId: a.localId } as PendingGitWrite;
    } catch {
      continue; // not a payload this gatekeeper staged
    }
    const deps = a.dependsOn
      .map((d) => localOf.get(d))
      .filter((l): l is string => !!l && state.overlay.has(l));
    state.overlay.add(a.localId, write, deps);
  }
}
