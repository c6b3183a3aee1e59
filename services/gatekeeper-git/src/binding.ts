/**
 * What every read and write of one binding session shares: who it acts for, the binding's
 * simulation state, the approval queue, limits, the upstream, and how a `ref` argument resolves
 * (scoped branch, pending branches, real refs) to a real commit plus the pending view on top.
 */
import {
  type ApprovalQueue,
  DEFAULT_MAX_FRAME_BYTES,
  inlineSafe,
  oneLine,
  type PageDescription,
} from "@gatehouse/gatekeeper-kit";
import { BlobCursor } from "./blob-cursor.ts";
import { InvalidRequest, NotFound, ScopeViolation } from "./errors.ts";
import type { RemoteRule } from "./remotes.ts";
import { branchCommit, headBranch, readBlobRange, resolveCommit } from "./repo.ts";
import { type GitResource, isValidBranchName } from "./resource-url.ts";
import type { BindingState } from "./state.ts";
import type { Upstream } from "./upstream.ts";
import { type BranchView, type PendingViews, pendingViews, viewOf } from "./view.ts";

/** Limits of a binding. */
export interface Limits {
  /** Paths per listFiles page and matches per grep page. */
  listPageSize: number;
  /** Commits per log page. */
  logPageSize: number;
  /** Largest file readFile returns whole, and the largest content a commit may write, bytes. */
  maxFileBytes: number;
  /**
   * The sandbox runners' frame cap (their SANDBOX_MAX_FRAME_BYTES), bytes: every reply is sized to
   * fit one frame under it (readFilePage's page size is derived from it, see reads.ts).
   */
  maxFrameBytes: number;
  /** Budget of a diff in an approver description and of one diff page, bytes. */
  maxDiffBytes: number;
  /** Most file changes in one commit. */
  maxChanges: number;
}

export const DEFAULT_LIMITS: Limits = {
  listPageSize: 1000,
  logPageSize: 100,
  maxFileBytes: 1024 * 1024,
  maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
  maxDiffBytes: 64 * 1024,
  maxChanges: 200,
};

/** Who the session acts for. */
export interface SessionContext {
  workspaceId: string;
  binding: string;
  callerToken: string;
  resource: GitResource;
}

/**
 * A resolved `ref`: the real commit, the branch (if the ref is one, or the branch a pending
 * commit id is on) and the pending view on it.
 */
export interface ResolvedRef {
  commit: string;
  branch: string | undefined;
  view: BranchView;
  /** How descriptions name the revision when the ref was a provisional id, e.g. "~2 (pending on main)". */
  label?: string;
}

/** A provisional id as a ref: "~" and digits (validity is checked against the binding's ids). */
const PROVISIONAL_REF = /^~\d{1,9}$/;

/** The shared context of one binding session. */
export class Binding {
  constructor(
    readonly ctx: SessionContext,
    readonly state: BindingState,
    readonly approval: ApprovalQueue,
    readonly limits: Limits,
    readonly upstream: Upstream,
    /** The admin's remotes (push targets of local repositories must be covered). */
    readonly remotes: readonly RemoteRule[],
  ) {}

  #cursor: BlobCursor | undefined;

  /**
   * Bytes [start, end) of blob `sha` (fewer at its end). Reading a blob front to back, page after
   * page, continues one git process (blob-cursor.ts) instead of streaming from byte 0 each time.
   * @throws GitFailed when git cannot read the blob.
   */
  readBlobRange(sha: string, start: number, end: number): Promise<Buffer> {
    if (!this.#cursor || this.#cursor.sha !== sha || !this.#cursor.canServe(start)) {
      this.#cursor?.close();
      this.#cursor = new BlobCursor(this.gitDir, sha);
    }
    return this.#cursor.range(start, end).catch((e: unknown) => {
      // A concurrent read moved the cursor past `start`: read this range on its own.
      if (e instanceof RangeError) return readBlobRange(this.gitDir, sha, start, end);
      throw e;
    });
  }

  get gitDir(): string {
    return this.ctx.resource.gitDir;
  }

  get prefix(): string {
    return this.ctx.resource.pathPrefix;
  }

  /** The repository's short name for a description's Markdown (`inlineSafe`). */
  get repoName(): string {
    return inlineSafe(this.repoTitle);
  }

  /** The repository's short name as plain text for titles (`oneLine`: every script kept). */
  get repoTitle(): string {
    return oneLine(this.ctx.resource.repoPath.split("/").pop() ?? "repo");
  }

  /** " under docs/" when the binding is narrowed by #path=, else "". */
  get scopeText(): string {
    return this.prefix ? ` under ${inlineSafe(this.prefix)}` : "";
  }

  /** An observation description for this binding, flagged when the admin marked the repo restricted. */
  observation(kind: string, title: string, description: string): PageDescription {
    return { title, description, containsRestrictedData: this.ctx.resource.restricted, kind };
  }

  /** Checks a branch argument against `#branch=`. @throws InvalidRequest, ScopeViolation. */
  checkBranch(name: unknown, what: string): string {
    if (typeof name !== "string" || !isValidBranchName(name)) {
      throw new InvalidRequest(`${what} must be a branch name (letters, digits, ._/-)`);
    }
    const scoped = this.ctx.resource.branch;
    if (scoped !== undefined && name !== scoped) {
      throw new ScopeViolation(
        `this binding is narrowed to branch ${scoped} (#branch=); ${what} must be "${scoped}"`,
      );
    }
    return name;
  }

  /**
   * Resolves `ref` (default: the scoped branch, else HEAD's branch) after refreshing the upstream.
   * A branch created by a pending createBranch resolves to its start commit plus its pending view.
   * A provisional id ("~2") the binding handed out resolves, while pending, to its branch as of
   * that write (its real base plus the pending commits up to and including ~2); once applied, to
   * the real commit it became (a createBranch id: to its branch).
   * @throws InvalidRequest (malformed), ScopeViolation (#branch=), NotFound (no such ref, or a
   *   provisional id that is unknown, rejected, failed or a push, naming the id and its state).
   */
  async resolve(ref: unknown): Promise<ResolvedRef> {
    if (typeof ref === "string" && PROVISIONAL_REF.test(ref)) return this.#resolveProvisional(ref);
    const scoped = this.ctx.resource.branch;
    if (ref !== undefined && (typeof ref !== "string" || ref === "" || !isValidBranchName(ref))) {
      throw new InvalidRequest(
        'ref must be a branch name, a commit sha (letters, digits, ._/-) or a provisional commit id such as "~1"',
      );
    }
    if (scoped !== undefined && ref !== undefined && ref !== scoped) {
      throw new ScopeViolation(
        `this binding is narrowed to branch ${scoped} (#branch=); ref must be omitted or "${scoped}"`,
      );
    }
    await this.upstream.refresh();
    const name = (ref as string | undefined) ?? scoped ?? (await headBranch(this.gitDir)) ?? "HEAD";
    return this.#resolveName(name);
  }

  /** The pending views of this binding (applied commits known by their real sha). */
  views(untilLocalId?: string): PendingViews {
    return pendingViews(this.state.overlay, untilLocalId, (id) => this.state.ids.permanentOf(id));
  }

  /**
   * A provisional id as a ref (the scope needs no check: the write was made through this binding).
   * @throws NotFound naming the id and why it names no revision.
   */
  async #resolveProvisional(id: string): Promise<ResolvedRef> {
    const sha = this.state.ids.permanentOf(id);
    await this.upstream.refresh();
    if (sha !== undefined) return { ...(await this.#resolveName(sha)), label: `${id} (applied as ${sha})` };
    const entry = this.state.overlay.pending().find((p) => p.localId === id);
    const settled = this.state.settled.get(id);
    if (entry?.write.kind === "createBranch" || (!entry && settled?.kind === "branch")) {
      const name =
        entry?.write.kind === "createBranch" ? entry.write.name : (settled as { name: string }).name;
      if (!entry) return { ...(await this.#resolveName(name)), label: `${id} (branch ${oneLine(name)})` };
      const view = viewOf(this.views(id), name);
      return {
        commit: view.createdAt?.commit ?? (await this.#resolveName(name)).commit,
        branch: name,
        view,
        label: `${id} (pending branch ${oneLine(name)})`,
      };
    }
    if (entry && entry.write.kind !== "push") {
      const branch = entry.write.branch;
      const base = await this.#resolveName(branch);
      return {
        commit: base.commit,
        branch,
        view: viewOf(this.views(id), branch),
        label: `${id} (pending on ${oneLine(branch)})`,
      };
    }
    const why =
      entry || settled?.kind === "push"
        ? "is a push, which names no revision; pass the branch name"
        : settled?.kind === "dropped"
          ? `${settled.why}, so it names no revision`
          : this.state.ids.issued(id)
            ? "is no longer pending and was not applied as a commit (rejected, failed or its outcome unknown: the action log says which), so it names no revision; find a commit's sha with log()"
            : "was never handed out by this binding";
    throw new NotFound(`ref ${id} ${why}`);
  }

  /** A branch (pending or real) or commit name, after the upstream was refreshed. @throws NotFound. */
  async #resolveName(name: string): Promise<ResolvedRef> {
    const views = this.views();
    const pendingBranch = views.get(name)?.createdAt;
    if (pendingBranch && (await branchCommit(this.gitDir, name)) === undefined) {
      return { commit: pendingBranch.commit, branch: name, view: viewOf(views, name) };
    }
    // One rev-parse when `name` is a branch (the common case); otherwise a commit sha.
    const onBranch = await branchCommit(this.gitDir, name);
    if (onBranch !== undefined) return { commit: onBranch, branch: name, view: viewOf(views, name) };
    return {
      commit: await resolveCommit(this.gitDir, name),
      branch: undefined,
      view: viewOf(views, undefined),
    };
  }
}
