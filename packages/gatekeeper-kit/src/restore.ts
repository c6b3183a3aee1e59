/**
 * Rebuilding a simulating gatekeeper's overlay after it restarted: the approval service still holds
 * every write of the binding that is not applied, failed or rejected, with its staged payload, in
 * submission order (`ListUnappliedForCaller`). They rejoin the overlay with their dependencies, so
 * reads show them again, and every local id the binding used is reserved, so a new write never
 * reuses one. Reverts a person staged (`implementsRevert`) are not agent writes and stay out.
 *
 * Provisional ids survive too: the approval service lists the binding's applied actions whose
 * local id is provisional (`~N`) with their result_json, and a gatekeeper-supplied `applied`
 * parser turns each result into the permanent id the provisional one became (git: the commit's
 * sha), recorded with `ids.alias`. So `~1`, applied before a restart, still names its commit after.
 */
import type { ApprovalQueue } from "./approval-client.ts";
import type { PendingOverlay } from "./overlay.ts";
import type { ProvisionalIds } from "./provisional-ids.ts";

/**
 * What an applied provisional id became, from its action's result_json: the permanent id to
 * alias it to, or undefined when the result names none (the gatekeeper may record what it needs
 * itself, e.g. a created branch). Must not throw for results it does not know (undefined).
 */
export type AppliedResultParser = (localId: string, resultJson: string) => string | undefined;

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
 * or returns undefined (or throws) for one this gatekeeper does not replay. `applied` (optional)
 * turns an applied provisional id's result_json into its permanent id (see the file comment); an
 * alias that cannot be recorded (a result that clashes with another id's) is skipped.
 * @throws ApprovalRefused when the approval service refuses the listing.
 */
export function restoreOverlayOnce<W>(
  state: RestorableState<W>,
  approval: Pick<ApprovalQueue, "listUnappliedForCaller">,
  callerToken: string,
  parse: (payloadJson: string, localId: string) => W | undefined,
  applied?: AppliedResultParser,
): Promise<void> {
  state.restored ??= restore(state, approval, callerToken, parse, applied).catch((e: unknown) => {
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
  applied: AppliedResultParser | undefined,
): Promise<void> {
  const listing = await approval.listUnappliedForCaller(callerToken);
  const { actions, usedLocalIds } = listing;
  for (const id of usedLocalIds) state.ids.reserve(id);
  for (const a of listing.applied ?? []) {
    state.ids.reserve(a.localId);
    const permanent = applied?.(a.localId, a.resultJson);
    if (permanent === undefined || state.ids.permanentOf(a.localId) !== undefined) continue;
    try {
      state.ids.alias(a.localId, permanent);
    } catch {
      // A result naming an id another provisional id already became: left unaliased.
    }
  }
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
