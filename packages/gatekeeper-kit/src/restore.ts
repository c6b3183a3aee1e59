/**
 * Rebuilding a simulating gatekeeper's overlay after it restarted: the approval service still holds
 * every write of the binding that is not applied, failed or rejected, with its staged payload, in
 * submission order (`ListUnappliedForCaller`). They rejoin the overlay with their dependencies, so
 * reads show them again, and every local id the binding used is reserved, so a new write never
 * reuses one. Reverts a person staged (`implementsRevert`) are not agent writes and stay out.
 */
import type { ApprovalQueue } from "./approval-client.ts";
import type { PendingOverlay } from "./overlay.ts";
import type { ProvisionalIds } from "./provisional-ids.ts";

/** What a restore rebuilds, and where it records that it ran. */
export interface RestorableState<W> {
  overlay: PendingOverlay<W>;
  ids: ProvisionalIds;
  /** Set once the overlay was rebuilt (the first session of the binding in this process). */
  restored?: Promise<void> | undefined;
}

/**
 * Restores `state` from the approval service once; later calls wait for the first, and a failed
 * restore is tried again at the next call. `parse` turns a staged payload into the overlay's write,
 * or returns undefined (or throws) for one this gatekeeper does not replay.
 * @throws ApprovalRefused when the approval service refuses the listing.
 */
export function restoreOverlayOnce<W>(
  state: RestorableState<W>,
  approval: Pick<ApprovalQueue, "listUnappliedForCaller">,
  callerToken: string,
  parse: (payloadJson: string, localId: string) => W | undefined,
): Promise<void> {
  state.restored ??= restore(state, approval, callerToken, parse).catch((e: unknown) => {
    state.restored = undefined;
    throw e;
  });
  return state.restored;
}

async function restore<W>(
  state: RestorableState<W>,
  approval: Pick<ApprovalQueue, "listUnappliedForCaller">,
  callerToken: string,
  parse: (payloadJson: string, localId: string) => W | undefined,
): Promise<void> {
  const { actions, usedLocalIds } = await approval.listUnappliedForCaller(callerToken);
  for (const id of usedLocalIds) state.ids.reserve(id);
  const localOf = new Map(actions.map((u) => [u.action?.id ?? 0, u.action?.localId ?? ""]));
  for (const u of actions) {
    const a = u.action;
    if (!a || a.description?.implementsRevert || state.overlay.has(a.localId)) continue;
    let write: W | undefined;
    try {
      write = parse(u.payloadJson, a.localId);
    } catch {
      write = undefined;
    }
    if (write === undefined) continue; // not a payload this gatekeeper replays
    const deps = a.dependsOn
      .map((d) => localOf.get(d))
      .filter((l): l is string => !!l && state.overlay.has(l));
    state.overlay.add(a.localId, write, deps);
  }
}
