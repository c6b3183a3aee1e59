/**
 * Provisional ids for simulated writes (docs/architecture.md "The approval contract"): `~1`, `~2`, ... handed out in
 * order within one binding session, returned to the agent at once as if the write had happened.
 * When the action is applied, the external system's real id (a commit sha, an issue number) is
 * recorded as the provisional id's permanent alias; later calls may name either.
 */
import { InvalidRequest, UnknownAction } from "./errors.ts";

const PROVISIONAL = /^~[1-9][0-9]*$/;

/** True when `id` has the provisional form `~N` (N a positive integer without leading zeros). */
export function isProvisionalId(id: string): boolean {
  return PROVISIONAL.test(id);
}

/** The provisional ids of one binding session and their permanent aliases. */
export class ProvisionalIds {
  #next = 1;
  readonly #permanent = new Map<string, string>();
  readonly #byPermanent = new Map<string, string>();

  /** Hands out the next id: "~1", then "~2", ... */
  next(): string {
    return `~${this.#next++}`;
  }

  /**
   * Marks `id` as already used (e.g. by this binding before a restart): `next` never hands it out
   * again. Ids that are not provisional are ignored.
   */
  reserve(id: string): void {
    if (isProvisionalId(id)) this.#next = Math.max(this.#next, Number(id.slice(1)) + 1);
  }

  /** True when `id` was handed out by this session. */
  issued(id: string): boolean {
    return isProvisionalId(id) && Number(id.slice(1)) < this.#next;
  }

  /**
   * Records `permanent` (non-empty) as the alias of `provisional`. Idempotent for the same pair.
   * @throws UnknownAction when `provisional` was not handed out here; InvalidRequest when it
   *         already has a different alias, `permanent` is empty or provisional-looking, or
   *         `permanent` is already the alias of another id.
   */
  alias(provisional: string, permanent: string): void {
    if (!this.issued(provisional)) {
      throw new UnknownAction(`${provisional} is not a provisional id handed out by this binding session`);
    }
    if (permanent === "" || isProvisionalId(permanent)) {
      throw new InvalidRequest(`the permanent id of ${provisional} must be a real, non-provisional id`);
    }
    const had = this.#permanent.get(provisional);
    if (had === permanent) return;
    if (had !== undefined) {
      throw new InvalidRequest(`${provisional} already became ${had}; it cannot also become ${permanent}`);
    }
    const other = this.#byPermanent.get(permanent);
    if (other !== undefined) {
      throw new InvalidRequest(`${permanent} is already the permanent id of ${other}`);
    }
    this.#permanent.set(provisional, permanent);
    this.#byPermanent.set(permanent, provisional);
  }

  /** The permanent alias of `provisional`, or undefined while it is pending (or unknown). */
  permanentOf(provisional: string): string | undefined {
    return this.#permanent.get(provisional);
  }

  /** The provisional id that became `permanent`, if any. */
  provisionalOf(permanent: string): string | undefined {
    return this.#byPermanent.get(permanent);
  }

  /**
   * The id to use against the external system: the alias of a provisional id once it has one,
   * the provisional id itself while pending, any other id unchanged.
   * @throws UnknownAction for a provisional-looking id this session never handed out.
   */
  resolve(id: string): string {
    if (!isProvisionalId(id)) return id;
    if (!this.issued(id)) {
      throw new UnknownAction(`${id} is not a provisional id handed out by this binding session`);
    }
    return this.#permanent.get(id) ?? id;
  }
}
