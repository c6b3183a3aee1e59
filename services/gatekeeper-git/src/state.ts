/**
 * Per-binding simulation state shared by sessions, ApplyAction and ActionRejected: the ordered
 * pending commits (the kit's PendingOverlay), provisional ids, and the apply record that makes
 * ApplyAction at-most-once per action id within this process.
 */
import { PendingOverlay, ProvisionalIds } from "@gatehouse/gatekeeper-kit";
import type { ApplyActionResponse } from "@gatehouse/proto";
import { FetchTracker } from "./upstream.ts";

/**
 * One file change of a commit: new text content, a deletion, or (reverts only, never from an
 * agent) an exact earlier blob with its mode, so binary files and modes come back byte for byte.
 */
export type FileChange =
  | { path: string; content: string }
  | { path: string; delete: true }
  | { path: string; blob: string; mode: "100644" | "100755" };

/** What a commit action carries (payload_json), enough to apply it without session state. */
export interface CommitPayload {
  kind?: "commit";
  branch: string;
  message: string;
  changes: FileChange[];
  /** Real branch tip (sha) when the commit was made. */
  parent: string;
  /** For each changed path, the blob sha the agent saw (null = absent); the rebase check uses it. */
  base: Record<string, string | null>;
}

/** What a createBranch action carries: the new branch and where it starts. */
export interface CreateBranchPayload {
  kind: "createBranch";
  name: string;
  /** The real commit it starts at; when `fromPending` is set, the real commit under that chain. */
  fromCommit: string;
  /** Set when it starts at a pending commit ("~N"): applied once ~N is, at ~N's real sha. */
  fromPending?: string;
  /** The branch `fromPending` was committed on. */
  fromBranch?: string;
}

/** What a push action carries: push `branch` of a local repository to its remote `remote`. */
export interface PushPayload {
  kind: "push";
  branch: string;
  remote: string;
  /** The remote's URL when the push was staged; apply refuses if the repository's config changed it. */
  remoteUrl: string;
}

/** Any staged write of this gatekeeper. */
export type WritePayload = CommitPayload | CreateBranchPayload | PushPayload;

/** A pending commit in the overlay. */
export interface PendingCommit extends CommitPayload {
  localId: string;
}

/** A pending write in the overlay (with its provisional id). */
export type PendingGitWrite =
  | PendingCommit
  | (CreateBranchPayload & { localId: string })
  | (PushPayload & { localId: string });

/**
 * What became of a provisional id that left the overlay other than as an applied commit (whose
 * real sha is `ids.permanentOf`): an applied createBranch (its branch exists now), or a write that
 * was dropped (`why`, e.g. "was rejected", "failed to apply").
 */
export type SettledWrite =
  | { kind: "branch"; name: string }
  | { kind: "push" }
  | { kind: "dropped"; why: string };

/** Simulation state of one binding. */
export interface BindingState {
  overlay: PendingOverlay<PendingGitWrite>;
  ids: ProvisionalIds;
  /** Provisional id -> what became of it, for ids no longer pending (see SettledWrite). */
  settled: Map<string, SettledWrite>;
  /** Tail of the binding's commit queue: commits are built and submitted one at a time, in call order. */
  queue: Promise<unknown>;
  /** Set once the overlay was rebuilt from the approval service (restore.ts). */
  restored?: Promise<void> | undefined;
}

/**
 * Drops `localId` from the overlay (rejected, or its apply failed) with every pending write built
 * on it, remembering why each is gone so a later ref naming one says so.
 * @param why what happened to `localId`, e.g. "was rejected".
 * @returns the dropped local ids in submission order.
 */
export function dropWrite(state: BindingState, localId: string, why: string): string[] {
  const dropped = state.overlay.drop(localId);
  for (const id of dropped) {
    state.settled.set(id, {
      kind: "dropped",
      why: id === localId ? why : `was dropped because ${localId}, which it was built on, ${why}`,
    });
  }
  return dropped;
}

/** Runs `fn` after the binding's earlier queued work (so a commit sees every earlier pending commit). */
export function inOrder<T>(state: BindingState, fn: () => Promise<T>): Promise<T> {
  const next = state.queue.then(fn, fn);
  state.queue = next.catch(() => undefined);
  return next;
}

/** Every binding's state plus the apply record, for one gatekeeper process. */
export class GitState {
  readonly #bindings = new Map<string, BindingState>();
  /** action id -> outcome of its one apply (a second ApplyAction returns it without writing). */
  readonly applied = new Map<string, Promise<ApplyActionResponse>>();
  readonly #locks = new Map<string, Promise<unknown>>();
  /** Fetch throttling of remote mirrors, shared by every binding. */
  readonly fetches: FetchTracker;

  constructor(fetchIntervalMs = 2000) {
    this.fetches = new FetchTracker(fetchIntervalMs);
  }

  /** The state of (workspace, binding), created on first use. */
  binding(workspaceId: string, binding: string): BindingState {
    const key = `${workspaceId}\u0000${binding}`;
    let s = this.#bindings.get(key);
    if (!s) {
      s = {
        overlay: new PendingOverlay<PendingGitWrite>(),
        ids: new ProvisionalIds(),
        settled: new Map(),
        queue: Promise.resolve(),
      };
      this.#bindings.set(key, s);
    }
    return s;
  }

  /** Runs `fn` after every earlier `serialize` call with the same key finished. */
  serialize<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#locks.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    this.#locks.set(
      key,
      next.catch(() => undefined),
    );
    return next;
  }
}
