/**
 * Whether the bindings an execution started with are still granted, read from the workspace stream
 * as it grows (several kernel processes may share one store, so no in-process signal is relied on).
 * Each check folds only the events appended since the previous one.
 */
import type { EventStore } from "@gatehouse/event-store";
import { BindingRemoved } from "@gatehouse/proto";
import { type BindingState, evolveWorkspace, streamOf, type WorkspaceState } from "./domain/workspace.ts";

/** Why a binding is no longer granted to an execution. */
export interface Revocation {
  binding: string;
  /** "user:<id>" from BindingRemoved, or "" when the grant was replaced without one (never expected). */
  removedBy: string;
  reason: string;
}

/** The message a snippet's call on a revoked binding is rejected with. */
export function revokedMessage(r: Revocation): string {
  const by = r.removedBy ? ` by ${r.removedBy}` : "";
  const why = r.reason ? ` (${r.reason})` : "";
  return `binding ${r.binding} was removed from this workspace${by}${why} while this execution ran; its calls are refused and nothing was recorded`;
}

/** Tracks one workspace's grants from a known state onwards. */
export class GrantWatch {
  private state: WorkspaceState;
  private readonly removals = new Map<string, BindingRemoved>();

  constructor(
    private readonly store: EventStore,
    start: WorkspaceState,
  ) {
    this.state = start;
  }

  /**
   * undefined while `b` (its grant as the execution started) stands; the revocation once the
   * binding was removed, or replaced by a new grant of the same name.
   */
  async revoked(b: BindingState): Promise<Revocation | undefined> {
    const events = await this.store.readStream(streamOf(this.state.id), {
      fromRevision: this.state.revision + 1,
    });
    for (const e of events) {
      if (e.type === "BindingRemoved") {
        const removed = BindingRemoved.fromJSON(e.data);
        this.removals.set(`${removed.binding}\u0000${removed.grant}`, removed);
      }
      this.state = evolveWorkspace(this.state, e);
    }
    if (this.state.bindings.get(b.name)?.grant === b.grant) return undefined;
    const removed = this.removals.get(`${b.name}\u0000${b.grant}`);
    return { binding: b.name, removedBy: removed?.removedBy ?? "", reason: removed?.reason ?? "" };
  }
}
