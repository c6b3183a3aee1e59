/**
 * The action journal of a gatekeeper: each write's life as a small state machine.
 *
 * ```
 * staged ──submitted──> pending ──claimed──> applying ──applied──> applied
 *    │                     │                     └─────failed────> failed
 *    └──discarded (gone)   └──rejected──> rejected
 * ```
 *
 * - `claim` is the at-most-once guard: only a pending action can be claimed, so a second
 *   ApplyAction for the same action (a retry, a duplicate delivery) is refused, never re-run.
 *   An action left `applying` by a crash stays there: its outcome is unknown, never retried.
 * - A rejected or failed action cascades: every pending action that depends on it, transitively,
 *   becomes rejected with `cascadedFrom` (docs/architecture.md "The approval contract").
 * - A late reject cannot overwrite `applying`/`applied`.
 *
 * `transition` is the pure core; `ActionJournal` keeps the entries of one gatekeeper (in memory).
 */
import { cascadeFrom } from "./cascade.ts";
import { ActionStateConflict, InvalidRequest, UnknownAction } from "./errors.ts";

/** The states of a journal entry. */
export type JournalState = "staged" | "pending" | "applying" | "applied" | "failed" | "rejected";

/** What moves an entry. */
export type JournalEventType = "submitted" | "claimed" | "applied" | "failed" | "rejected";

const NEXT: Record<JournalState, Partial<Record<JournalEventType, JournalState>>> = {
  staged: { submitted: "pending" },
  pending: { claimed: "applying", rejected: "rejected" },
  applying: { applied: "applied", failed: "failed" },
  applied: {},
  failed: {},
  rejected: {},
};

/** True for applied, failed and rejected: nothing moves them any more. */
export function isFinal(state: JournalState): boolean {
  return Object.keys(NEXT[state]).length === 0;
}

/**
 * The state after `event` in `state`.
 * @throws ActionStateConflict naming both, e.g. "cannot claim an action that is applying".
 */
export function transition(state: JournalState, event: JournalEventType): JournalState {
  const next = NEXT[state][event];
  if (next === undefined) {
    const verb = {
      submitted: "submit",
      claimed: "claim",
      applied: "apply",
      failed: "fail",
      rejected: "reject",
    }[event];
    throw new ActionStateConflict(`cannot ${verb} an action that is ${state}`);
  }
  return next;
}

/** One action in the journal. */
export interface JournalEntry<P> {
  /** Gatekeeper-local id (e.g. "~1"), unique per journal. */
  localId: string;
  /** Log id from SubmitAction; 0 while staged. */
  actionId: number;
  state: JournalState;
  /** The staged payload (what ApplyAction performs). */
  payload: P;
  /** Local ids this action needs. */
  dependsOn: readonly string[];
  /** Result JSON once applied. */
  resultJson?: string;
  /** Why it failed or was rejected. */
  reason?: string;
  /** Local id of the root whose rejection/failure rejected this one. */
  cascadedFrom?: string;
}

/** The journal of one gatekeeper binding (or process). Entries keep submission order. */
export class ActionJournal<P> {
  readonly #entries: JournalEntry<P>[] = [];

  /**
   * Stages a write before SubmitAction. `dependsOn` must name journal entries.
   * @throws InvalidRequest for a duplicate local id; UnknownAction for an unknown dependency.
   */
  stage(localId: string, payload: P, dependsOn: readonly string[] = []): JournalEntry<P> {
    if (this.#find(localId)) throw new InvalidRequest(`local id ${localId} is already in the journal`);
    for (const d of dependsOn) {
      if (!this.#find(d)) throw new UnknownAction(`dependsOn names ${d}, which this binding did not stage`);
    }
    const e: JournalEntry<P> = { localId, actionId: 0, state: "staged", payload, dependsOn: [...dependsOn] };
    this.#entries.push(e);
    return { ...e };
  }

  /** staged → pending with its log id. @throws UnknownAction, ActionStateConflict, InvalidRequest (bad id). */
  submitted(localId: string, actionId: number): void {
    if (!Number.isSafeInteger(actionId) || actionId <= 0) {
      throw new InvalidRequest(`actionId must be a positive integer log id, got ${actionId}`);
    }
    const e = this.#get(localId);
    e.state = transition(e.state, "submitted");
    e.actionId = actionId;
  }

  /** Removes a staged entry whose SubmitAction failed (nothing half-written). @throws ActionStateConflict. */
  discard(localId: string): void {
    const e = this.#get(localId);
    if (e.state !== "staged") throw new ActionStateConflict(`cannot discard an action that is ${e.state}`);
    this.#entries.splice(this.#entries.indexOf(e), 1);
  }

  /**
   * pending → applying: the at-most-once claim. Call before touching the external system.
   * @returns a copy of the entry (with its payload).
   * @throws ActionStateConflict when already claimed, finished or not yet submitted.
   */
  claim(localId: string): JournalEntry<P> {
    const e = this.#get(localId);
    e.state = transition(e.state, "claimed");
    return { ...e };
  }

  /** applying → applied. @throws UnknownAction, ActionStateConflict. */
  applied(localId: string, resultJson = ""): void {
    const e = this.#get(localId);
    e.state = transition(e.state, "applied");
    e.resultJson = resultJson;
  }

  /**
   * applying → failed, then cascades to pending dependents.
   * @returns the cascaded entries (copies), in submission order.
   */
  failed(localId: string, reason: string): JournalEntry<P>[] {
    const e = this.#get(localId);
    e.state = transition(e.state, "failed");
    e.reason = reason;
    return this.#cascade(e);
  }

  /**
   * pending → rejected, then cascades to pending dependents with the reason
   * "needed action <id>, which did not complete".
   * @returns the cascaded entries (copies, root excluded), in submission order.
   * @throws ActionStateConflict when the action is not pending (a late reject never overwrites).
   */
  reject(localId: string, reason: string): JournalEntry<P>[] {
    const e = this.#get(localId);
    e.state = transition(e.state, "rejected");
    e.reason = reason;
    return this.#cascade(e);
  }

  /** A copy of the entry with this local id, or undefined. */
  get(localId: string): JournalEntry<P> | undefined {
    const e = this.#find(localId);
    return e && { ...e };
  }

  /** The local id of the entry with log id `actionId`, or undefined. */
  localIdOf(actionId: number): string | undefined {
    return this.#entries.find((e) => e.actionId === actionId && actionId > 0)?.localId;
  }

  /** Copies of every entry in submission order. */
  entries(): JournalEntry<P>[] {
    return this.#entries.map((e) => ({ ...e }));
  }

  #cascade(root: JournalEntry<P>): JournalEntry<P>[] {
    const open = this.#entries.filter((e) => e.state === "pending" || e.state === "staged" || e === root);
    const hit = cascadeFrom(
      [root.localId],
      open.map((e) => ({ id: e.localId, dependsOn: e.dependsOn })),
    );
    const label = root.actionId > 0 ? String(root.actionId) : root.localId;
    const out: JournalEntry<P>[] = [];
    for (const c of hit) {
      const e = this.#get(c.id);
      if (e.state !== "pending") continue; // a staged dependent is refused by the approval service on submit
      e.state = "rejected";
      e.reason = `needed action ${label}, which did not complete`;
      e.cascadedFrom = root.localId;
      out.push({ ...e });
    }
    return out;
  }

  #find(localId: string): JournalEntry<P> | undefined {
    return this.#entries.find((e) => e.localId === localId);
  }

  #get(localId: string): JournalEntry<P> {
    const e = this.#find(localId);
    if (!e) throw new UnknownAction(`${localId} is not an action of this journal`);
    return e;
  }
}
