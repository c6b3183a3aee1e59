/**
 * What every read and write of one binding session shares: who it acts for, the binding's
 * simulation state, the approval queue, limits, the upstream, and how a `ref` argument resolves
 * (scoped branch, pending branches, real refs) to a real commit plus the pending view on top.
 */
import { type ApprovalQueue, inlineSafe, type PageDescription } from "@gatehouse/gatekeeper-kit";
import { InvalidRequest, ScopeViolation } from "./errors.ts";
import type { RemoteRule } from "./remotes.ts";
import { branchCommit, headBranch, resolveCommit } from "./repo.ts";
import { type GitResource, isValidBranchName } from "./resource-url.ts";
import type { BindingState } from "./state.ts";
import type { Upstream } from "./upstream.ts";
import { type BranchView, pendingViews, viewOf } from "./view.ts";

/** Limits of a binding. */
export interface Limits {
  /** Paths per listFiles page and matches per grep page. */
  listPageSize: number;
  /** Commits per log page. */
  logPageSize: number;
  /** Largest file readFile returns whole, and the largest content a commit may write, bytes. */
  maxFileBytes: number;
  /** Bytes per readFilePage page. */
  filePageBytes: number;
  /** Budget of a diff in an approver description and of one diff page, bytes. */
  maxDiffBytes: number;
  /** Most file changes in one commit. */
  maxChanges: number;
}

export const DEFAULT_LIMITS: Limits = {
  listPageSize: 1000,
  logPageSize: 100,
  maxFileBytes: 1024 * 1024,
  filePageBytes: 1024 * 1024,
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

/** A resolved `ref`: the real commit, the branch (if the ref is one) and the pending view on it. */
export interface ResolvedRef {
  commit: string;
  branch: string | undefined;
  view: BranchView;
}

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

  get gitDir(): string {
    return this.ctx.resource.gitDir;
  }

  get prefix(): string {
    return this.ctx.resource.pathPrefix;
  }

  /** The repository's short name, inline-safe, for descriptions. */
  get repoName(): string {
    return inlineSafe(this.ctx.resource.repoPath.split("/").pop() ?? "repo");
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
   * @throws InvalidRequest (malformed), ScopeViolation (#branch=), NotFound (no such ref).
   */
  async resolve(ref: unknown): Promise<ResolvedRef> {
    const scoped = this.ctx.resource.branch;
    if (ref !== undefined && (typeof ref !== "string" || ref === "" || !isValidBranchName(ref))) {
      throw new InvalidRequest("ref must be a branch name or commit sha (letters, digits, ._/-)");
    }
    if (scoped !== undefined && ref !== undefined && ref !== scoped) {
      throw new ScopeViolation(
        `this binding is narrowed to branch ${scoped} (#branch=); ref must be omitted or "${scoped}"`,
      );
    }
    await this.upstream.refresh();
    const name = (ref as string | undefined) ?? scoped ?? (await headBranch(this.gitDir)) ?? "HEAD";
    const views = pendingViews(this.state.overlay);
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
