/**
 * The pending-action overlay of a simulating gatekeeper (docs/architecture.md "The approval contract"): pending writes
 * kept in submission order and applied over what the external system returns, so later reads
 * see them as if they had happened. A rejected (or failed) write is dropped together with every
 * pending write built on it; an applied write leaves the overlay (the external system has it now).
 *
 * ```ts
 * const overlay = new PendingOverlay<Commit>();
 * overlay.add("~1", commitA);
 * overlay.add("~2", commitB, ["~1"]);
 * const tree = overlay.view(realTree, (t, c) => applyCommit(t, c)); // A then B
 * overlay.drop("~1"); // -> ["~1", "~2"]; reads show neither
 * ```
 */
import { cascadeFrom } from "./cascade.ts";
import { InvalidRequest } from "./errors.ts";

/** One pending write. */
export interface PendingWrite<W> {
  localId: string;
  write: W;
  /** Pending local ids this write was built on (ids not pending when it was added are left out). */
  dependsOn: readonly string[];
}

/** Ordered pending writes of one binding. Not thread-safe across processes; one per binding. */
export class PendingOverlay<W> {
  #writes: PendingWrite<W>[] = [];

  /**
   * Appends a pending write (submission order). `dependsOn` may name writes that already left the
   * overlay; only pending ones are kept.
   * @throws InvalidRequest when `localId` is already pending.
   */
  add(localId: string, write: W, dependsOn: readonly string[] = []): void {
    if (this.has(localId)) {
      throw new InvalidRequest(
        `${localId} is already pending in this overlay; local ids are unique per binding`,
      );
    }
    const deps = [...new Set(dependsOn)].filter((d) => this.has(d));
    this.#writes.push({ localId, write, dependsOn: deps });
  }

  /** True when `localId` is pending. */
  has(localId: string): boolean {
    return this.#writes.some((w) => w.localId === localId);
  }

  /** The pending writes in submission order (a copy). */
  pending(): PendingWrite<W>[] {
    return this.#writes.map((w) => ({ ...w }));
  }

  /** Number of pending writes. */
  get size(): number {
    return this.#writes.length;
  }

  /**
   * Drops a rejected or failed write and every pending write built on it, transitively.
   * @returns the dropped local ids in submission order (empty when `localId` is not pending).
   */
  drop(localId: string): string[] {
    if (!this.has(localId)) return [];
    const gone = new Set([localId, ...cascadeFrom([localId], this.#nodes()).map((c) => c.id)]);
    const dropped = this.#writes.filter((w) => gone.has(w.localId)).map((w) => w.localId);
    this.#writes = this.#writes.filter((w) => !gone.has(w.localId));
    return dropped;
  }

  /**
   * Removes an applied write (the external system now shows it); its dependents stay pending.
   * @returns the write, or undefined when it was not pending.
   */
  settle(localId: string): W | undefined {
    const i = this.#writes.findIndex((w) => w.localId === localId);
    if (i < 0) return undefined;
    const [w] = this.#writes.splice(i, 1);
    for (const other of this.#writes) {
      if (other.dependsOn.includes(localId)) {
        other.dependsOn = other.dependsOn.filter((d) => d !== localId);
      }
    }
    return w!.write;
  }

  /**
   * `base` with every pending write applied by `apply`, in submission order. `apply` must not
   * mutate `base` if the caller reuses it. Errors thrown by `apply` propagate.
   */
  view<S>(base: S, apply: (state: S, write: W, localId: string) => S): S {
    return this.#writes.reduce((s, w) => apply(s, w.write, w.localId), base);
  }

  #nodes() {
    return this.#writes.map((w) => ({ id: w.localId, dependsOn: w.dependsOn }));
  }
}
