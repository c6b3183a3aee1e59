/**
 * The decisions of a `gatehouse review` walk, without any terminal: the order actions are shown in
 * (risky first), what approving, holding or rejecting one does to the actions that depend on it,
 * and the one decision submitted at the end (approvals bound to the digests of the records shown).
 */
import { type ActionRecord, ActionStatus } from "@gatehouse/proto";

/** What the person chose for one action, or what a choice on another action made of it. */
export type Choice =
  | { kind: "approve" }
  /** Left pending. `because`: the held, rejected or outside action that forced it (0: the person's choice). */
  | { kind: "hold"; because: number; note: string }
  /** Rejected by the person (`because` 0, sent as a Reject) or with a rejected dependency (not sent: the service cascades). */
  | { kind: "reject"; because: number; reason: string };

/** What a review submits: one approval request, then one Reject per action the person rejected. */
export interface ReviewPlan {
  /** Ids to approve, ascending (submission order). */
  approve: number[];
  /** Action id → the descriptionDigest of the record shown, for every id in `approve`. */
  descriptionDigests: Record<number, string>;
  /** The person's rejections (dependents are rejected by the service's cascade). */
  reject: { id: number; reason: string }[];
  /** Ids left pending, ascending. */
  hold: number[];
  /** Ids that will be rejected with a rejected dependency, ascending. */
  rejectedWith: number[];
}

/**
 * The pending actions of `all` to review, in the order shown: those whose description has risks
 * first, then the rest, each part by id (submission order). With `turn`, only the actions of that
 * execution (`executionId` equal to it) or of that built-in agent turn (execution ids
 * "<turn>.<step>.<n>").
 */
export function reviewOrder(all: ActionRecord[], turn?: string): ActionRecord[] {
  const pending = all
    .filter((a) => a.status === ActionStatus.ACTION_STATUS_PENDING)
    .filter((a) => !turn || a.executionId === turn || a.executionId.startsWith(`${turn}.`))
    .sort((a, b) => a.id - b.id);
  const risky = (a: ActionRecord) => (a.description?.risks.length ?? 0) > 0;
  return [...pending.filter(risky), ...pending.filter((a) => !risky(a))];
}

/**
 * One walk over `shown` (the records as fetched, in {@link reviewOrder}); `all` is the workspace's
 * action log, to see the state of dependencies outside the review. Each method returns the lines
 * to print about other actions its choice affected.
 */
export class ReviewSession {
  readonly choices = new Map<number, Choice>();
  private readonly byId: Map<number, ActionRecord>;
  private readonly inReview: Set<number>;

  constructor(
    readonly shown: ActionRecord[],
    all: ActionRecord[],
  ) {
    this.byId = new Map(all.map((a) => [a.id, a]));
    for (const a of shown) this.byId.set(a.id, a);
    this.inReview = new Set(shown.map((a) => a.id));
  }

  /** Whether the walk still has to ask about `id` (no choice yet, its own or forced by another). */
  undecided(id: number): boolean {
    return !this.choices.has(id);
  }

  /** Actions of the review that depend on `id`, directly or through others, by id. */
  dependentsOf(id: number): number[] {
    const out = new Set<number>();
    const stack = [id];
    while (stack.length) {
      const cur = stack.pop() as number;
      for (const a of this.shown) {
        if (a.dependsOn.includes(cur) && !out.has(a.id)) {
          out.add(a.id);
          stack.push(a.id);
        }
      }
    }
    return [...out].sort((x, y) => x - y);
  }

  /**
   * Approves `id`, unless it depends on an action that is pending and outside this review (the
   * service would refuse the batch): then it is held, saying which and how to approve both.
   */
  approve(id: number): string[] {
    const outside = this.pendingOutside(id);
    if (outside.length) {
      const ids = outside.map((d) => `#${d}`).join(", ");
      const note = `depends on ${ids}, pending and not in this review`;
      this.choices.set(id, { kind: "hold", because: outside[0] ?? 0, note });
      return [
        `#${id} held: it ${note}; review that turn too, or \`gatehouse approve ${this.workspace()} ${id} --with-deps\``,
      ];
    }
    this.choices.set(id, { kind: "approve" });
    return [];
  }

  /**
   * Holds `id` (leaves it pending) and every action of the review that depends on it — approved
   * earlier in the walk or not reached yet — since the service refuses to approve an action whose
   * dependency stays pending. Says which were held with it.
   */
  hold(id: number): string[] {
    this.choices.set(id, { kind: "hold", because: 0, note: "" });
    const moved: number[] = [];
    for (const d of this.dependentsOf(id)) {
      const c = this.choices.get(d);
      if (c?.kind === "reject" || (c?.kind === "hold" && c.because === 0)) continue;
      this.choices.set(d, { kind: "hold", because: id, note: `depends on held #${id}` });
      moved.push(d);
    }
    if (!moved.length) return [];
    return [
      `#${id} has dependents in this review: held with it: ${moved.map((d) => `#${d}`).join(", ")} (they cannot be approved while #${id} is pending)`,
    ];
  }

  /**
   * Rejects `id` with `reason`; the actions of the review that depend on it are rejected with it
   * (the service's cascade), whatever was chosen for them. Says which.
   */
  reject(id: number, reason: string): string[] {
    this.choices.set(id, { kind: "reject", because: 0, reason });
    const moved: number[] = [];
    for (const d of this.dependentsOf(id)) {
      const c = this.choices.get(d);
      if (c?.kind === "reject" && c.because === 0) continue;
      this.choices.set(d, { kind: "reject", because: id, reason: `depends on rejected #${id}` });
      moved.push(d);
    }
    if (!moved.length) return [];
    return [`rejecting #${id} rejects its dependents too: ${moved.map((d) => `#${d}`).join(", ")}`];
  }

  /**
   * Every action not decided yet is held (the walk stopped before them), with the actions that
   * depend on them (approved earlier or not). Says which approvals that took back.
   */
  holdRest(): string[] {
    const lines: string[] = [];
    for (const a of this.shown) {
      if (!this.undecided(a.id)) continue;
      const approvedDependents = this.dependentsOf(a.id).filter(
        (d) => this.choices.get(d)?.kind === "approve",
      );
      this.hold(a.id);
      this.choices.set(a.id, { kind: "hold", because: 0, note: "not reviewed" });
      if (approvedDependents.length) {
        lines.push(
          `#${a.id} was not reviewed and stays pending: held with it: ${approvedDependents.map((d) => `#${d}`).join(", ")}`,
        );
      }
    }
    return lines;
  }

  /** The decision to submit (call after every action has a choice; undecided ones count as held). */
  plan(): ReviewPlan {
    const p: ReviewPlan = { approve: [], descriptionDigests: {}, reject: [], hold: [], rejectedWith: [] };
    for (const a of [...this.shown].sort((x, y) => x.id - y.id)) {
      const c = this.choices.get(a.id);
      if (c?.kind === "approve") {
        p.approve.push(a.id);
        p.descriptionDigests[a.id] = a.descriptionDigest;
      } else if (c?.kind === "reject") {
        if (c.because === 0) p.reject.push({ id: a.id, reason: c.reason });
        else p.rejectedWith.push(a.id);
      } else p.hold.push(a.id);
    }
    return p;
  }

  /** Pending dependencies of `id` (transitive) that are not in this review. */
  private pendingOutside(id: number): number[] {
    const out = new Set<number>();
    const seen = new Set<number>();
    const stack = [...(this.byId.get(id)?.dependsOn ?? [])];
    while (stack.length) {
      const d = stack.pop() as number;
      if (seen.has(d)) continue;
      seen.add(d);
      const rec = this.byId.get(d);
      if (!this.inReview.has(d) && rec?.status === ActionStatus.ACTION_STATUS_PENDING) out.add(d);
      stack.push(...(rec?.dependsOn ?? []));
    }
    return [...out].sort((x, y) => x - y);
  }

  private workspace(): string {
    return this.shown[0]?.workspaceId ?? "<workspace>";
  }
}

/** "3 approve, 2 hold, 1 reject (+1 rejected with a rejected dependency)". */
export function planSummary(p: ReviewPlan): string {
  const cascade = p.rejectedWith.length
    ? ` (+${p.rejectedWith.length} rejected with a rejected dependency: ${p.rejectedWith.map((i) => `#${i}`).join(", ")})`
    : "";
  return `${p.approve.length} approve, ${p.hold.length} hold, ${p.reject.length} reject${cascade}`;
}
