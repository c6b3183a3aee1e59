import type { Logger } from "pino";
import { PoolExhaustedError, SandboxUnavailableError } from "../errors.ts";
import type { PoolMetrics } from "../metrics.ts";
import type { SandboxBackend } from "./backend.ts";
import type { PoolOptions, SandboxDescription } from "./options.ts";
import { describeExit, Sandbox } from "./sandbox.ts";

/** A workspace's lease: its sandbox (if any) and its queue of executions. */
interface Lease {
  workspaceId: string;
  sandbox: Sandbox | null;
  /** Settles when the last queued task has finished (the queue's tail). */
  tail: Promise<unknown>;
  /** Tasks queued or running. */
  pending: number;
  idleTimer: NodeJS.Timeout | null;
}

/** Thrown by SandboxPool.run when the task's signal was aborted before its turn came. */
export class TaskAbortedError extends Error {
  override name = "TaskAbortedError";
}

const START_ATTEMPTS = 3;
const MAX_BACKOFF_MS = 30_000;
const REFILL_DELAY_MS = 250;

/**
 * Per-workspace sandboxes from one backend, with a warm set for new workspaces.
 *
 * - A workspace leases its own sandbox on its first execution: a pre-started warm one when there is one
 *   (or one still starting), else a new one. A sandbox is never given to a second workspace: when a
 *   lease ends (idle for `idleMs`, evicted, or the sandbox died) the sandbox is destroyed.
 * - A workspace's executions run one at a time, in arrival order, on its sandbox.
 * - `warm` unassigned sandboxes are kept started; the pool refills after each lease, reap and crash
 *   (backing off after start failures). At most `maxSandboxes` exist; when a new workspace needs one at
 *   the cap, the least recently used idle workspace's sandbox is evicted, and if none is idle the
 *   execution fails with PoolExhaustedError.
 * - A sandbox that dies is dropped: only the execution running on it fails; the workspace's next
 *   execution gets a new sandbox.
 */
/** How a task's sandbox was had: ready at once ("warm") or after waiting for it to start ("cold"). */
export type SandboxStart = "warm" | "cold";

export class SandboxPool {
  private readonly all = new Set<Sandbox>();
  private readonly unassigned = new Set<Sandbox>();
  private readonly leases = new Map<string, Lease>();
  /** Sandboxes the pool itself retired (reaped, evicted, closed): their exit is expected. */
  private readonly retired = new WeakSet<Sandbox>();
  private readonly changeListeners = new Set<() => void>();
  private closed = false;
  /** True while makeRoom evicts: the slots it frees are for the caller's new sandbox. */
  private makingRoom = false;
  private failures = 0;
  private backoffUntil = 0;
  private refillTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly backend: SandboxBackend,
    private readonly options: PoolOptions,
    private readonly logger: Logger,
    private readonly metrics: PoolMetrics | null = null,
  ) {}

  /** Begins pre-starting the warm sandboxes (returns at once). */
  start(): void {
    this.refill();
  }

  /**
   * Runs `task` on `workspaceId`'s sandbox once every earlier task of that workspace has finished.
   * Leases a sandbox for the workspace when it has none (waiting for it to be ready).
   * @throws TaskAbortedError when `signal` was aborted before the task began;
   *   PoolExhaustedError when every sandbox slot is busy with other workspaces;
   *   SandboxUnavailableError when no sandbox could be started (or the pool is closing);
   *   whatever `task` throws.
   * `task` also gets how its sandbox was had: "warm" when it was ready (the workspace's own, or a
   * pre-started one), "cold" when the task waited for a sandbox to start.
   */
  run<T>(
    workspaceId: string,
    task: (sandbox: Sandbox, start: SandboxStart) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    let lease = this.leases.get(workspaceId);
    if (!lease) {
      lease = { workspaceId, sandbox: null, tail: Promise.resolve(), pending: 0, idleTimer: null };
      this.leases.set(workspaceId, lease);
    }
    const current = lease;
    current.pending++;
    if (current.idleTimer) clearTimeout(current.idleTimer);
    current.idleTimer = null;
    const result = current.tail.then(async () => {
      if (signal?.aborted) throw new TaskAbortedError("the task was aborted before it began");
      const { sandbox, start } = await this.acquire(current);
      this.metrics?.busy.inc();
      try {
        return await task(sandbox, start);
      } finally {
        this.metrics?.busy.dec();
      }
    });
    const done = () => {
      current.pending--;
      this.afterTask(current);
    };
    current.tail = result.then(done, done);
    return result;
  }

  /** Every live sandbox, for tests and status pages. */
  describe(): SandboxDescription[] {
    const now = Date.now();
    return [...this.all].map((sb) => ({
      id: sb.id,
      backend: sb.backendKind,
      instanceId: sb.instanceId,
      pid: sb.pid,
      workspaceId: sb.workspaceId,
      state: !sb.warm ? "starting" : sb.workspaceId ? "leased" : "warm",
      busy: sb.busy,
      executions: sb.executions,
      idleMs: sb.busy ? 0 : Math.max(0, now - sb.lastUsedAt),
    }));
  }

  /**
   * Resolves once `predicate(describe())` holds (checked now and after every pool change).
   * @throws Error when it does not hold within `timeoutMs`.
   */
  waitFor(predicate: (sandboxes: SandboxDescription[]) => boolean, timeoutMs = 60_000): Promise<void> {
    if (predicate(this.describe())) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!predicate(this.describe())) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`the pool did not reach the expected state within ${timeoutMs} ms`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.changeListeners.delete(check);
      };
      this.changeListeners.add(check);
    });
  }

  /**
   * Resolves once `warm` (capped by maxSandboxes) unassigned sandboxes are ready. While leases hold so
   * many sandboxes that the warm set cannot be refilled under the cap, it does not (leases are evicted only
   * when a new workspace needs room), and rejects after `timeoutMs`.
   */
  whenWarm(timeoutMs?: number): Promise<void> {
    const target = Math.min(this.options.warm, this.options.maxSandboxes);
    return this.waitFor((all) => all.filter((s) => s.state === "warm").length >= target, timeoutMs);
  }

  /** Stops refilling and reaping and destroys every sandbox. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.refillTimer) clearTimeout(this.refillTimer);
    for (const lease of this.leases.values()) if (lease.idleTimer) clearTimeout(lease.idleTimer);
    const all = [...this.all];
    for (const sb of all) this.retired.add(sb);
    await Promise.all(all.map((sb) => sb.destroy()));
  }

  private async acquire(lease: Lease): Promise<{ sandbox: Sandbox; start: SandboxStart }> {
    const begun = performance.now();
    let source: "warm" | "cold" | null = null;
    let start: SandboxStart = "warm";
    for (let attempt = 1; ; attempt++) {
      if (this.closed)
        throw new SandboxUnavailableError("the sandbox runner is shutting down; retry elsewhere");
      let sandbox = lease.sandbox;
      if (!sandbox?.alive) {
        sandbox = this.assign(lease);
        source ??= sandbox.warm ? "warm" : "cold";
        if (!sandbox.warm) start = "cold";
      }
      try {
        await sandbox.ready;
        if (sandbox.alive) {
          if (source) {
            this.claimInBackend(sandbox, lease.workspaceId);
            this.metrics?.claimSeconds.observe({ source }, (performance.now() - begun) / 1000);
          }
          return { sandbox, start };
        }
      } catch (error) {
        if (attempt >= START_ATTEMPTS) {
          throw new SandboxUnavailableError(
            `could not start a sandbox for the workspace after ${attempt} attempts: ${(error as Error).message}`,
          );
        }
      }
      if (lease.sandbox === sandbox) lease.sandbox = null;
    }
  }

  /**
   * Claims a newly leased sandbox in the backend (SandboxInstance.claim: the Kubernetes backend's label
   * patch), concurrently with the workspace's first execution, so the API round trip is not on its path.
   * A refused claim kills the sandbox: the execution on it fails as a crash and the next gets another.
   */
  private claimInBackend(sandbox: Sandbox, workspaceId: string): void {
    sandbox.claim(workspaceId).catch((error: Error) => {
      if (!sandbox.alive) return;
      this.logger.warn(
        { event: "sandbox_claim_failed", sandbox: sandbox.id, workspaceId, error: error.message },
        "the backend refused the claim of a sandbox; it is dropped",
      );
      this.metrics?.events.inc({ event: "claim_failed" });
      this.retired.add(sandbox);
      this.all.delete(sandbox);
      void sandbox.destroy();
    });
  }

  /** Gives the lease a never-used sandbox: a warm one, else one still starting, else a new one. */
  private assign(lease: Lease): Sandbox {
    const candidates = [...this.unassigned].filter((sb) => sb.alive);
    let sandbox = candidates.find((sb) => sb.warm) ?? candidates[0];
    if (sandbox) this.unassigned.delete(sandbox);
    else {
      this.makeRoom(lease);
      sandbox = this.spawn();
    }
    if (sandbox.workspaceId !== null || sandbox.executions > 0) {
      throw new Error(`internal: sandbox ${sandbox.id} already served a workspace`);
    }
    sandbox.workspaceId = lease.workspaceId;
    lease.sandbox = sandbox;
    this.logger.debug(
      { event: "sandbox_leased", sandbox: sandbox.id, workspaceId: lease.workspaceId, warm: sandbox.warm },
      "sandbox leased",
    );
    // Refill once this workspace's first execution is done (afterTask), or after REFILL_DELAY_MS at the
    // latest: starting a container costs CPU the execution that just took the warm sandbox needs.
    setTimeout(() => this.refill(), REFILL_DELAY_MS).unref();
    this.changed();
    return sandbox;
  }

  /** At the cap, evicts the least recently used idle workspace's sandbox; throws when none is idle. */
  private makeRoom(except: Lease): void {
    // A backend may report the evicted sandbox's exit synchronously; its refill must not take the slot.
    this.makingRoom = true;
    try {
      this.evictUntilRoom(except);
    } finally {
      this.makingRoom = false;
    }
  }

  private evictUntilRoom(except: Lease): void {
    while (this.all.size >= this.options.maxSandboxes) {
      let victim: Lease | null = null;
      for (const lease of this.leases.values()) {
        if (lease === except || lease.pending > 0 || !lease.sandbox) continue;
        if (!victim || lease.sandbox.lastUsedAt < (victim.sandbox?.lastUsedAt ?? 0)) victim = lease;
      }
      if (!victim) {
        throw new PoolExhaustedError(
          `all ${this.options.maxSandboxes} sandboxes are busy with other workspaces (SANDBOX_MAX_SANDBOXES); retry later`,
        );
      }
      // No refill here: the freed slot is for the caller's new sandbox (a refill would take it and
      // make the loop evict the next idle workspace too).
      this.endLease(victim, "evicted", false);
    }
  }

  private spawn(): Sandbox {
    const sandbox = new Sandbox(this.backend, this.options.readyTimeoutMs, this.logger);
    this.all.add(sandbox);
    sandbox.ready.then(
      () => {
        this.failures = 0;
        this.metrics?.startSeconds.observe((performance.now() - sandbox.startedAt) / 1000);
        this.metrics?.events.inc({ event: "started" });
        this.changed();
      },
      () => undefined,
    );
    sandbox.onExit((exit) => this.onSandboxExit(sandbox, describeExit(exit), exit.stderrTail));
    this.changed();
    return sandbox;
  }

  private onSandboxExit(sandbox: Sandbox, how: string, stderrTail: string): void {
    this.all.delete(sandbox);
    this.unassigned.delete(sandbox);
    const lease = sandbox.workspaceId ? this.leases.get(sandbox.workspaceId) : undefined;
    if (lease?.sandbox === sandbox) {
      lease.sandbox = null;
      if (lease.pending === 0) this.forgetLease(lease);
    }
    if (!sandbox.wasReady && !this.retired.has(sandbox)) {
      this.failures++;
      this.backoffUntil = Date.now() + Math.min(MAX_BACKOFF_MS, 500 * 2 ** (this.failures - 1));
      this.metrics?.events.inc({ event: "start_failed" });
      this.logger.error(
        { event: "sandbox_start_failed", sandbox: sandbox.id, exit: how, stderr: stderrTail },
        "a sandbox failed to start",
      );
    } else if (sandbox.killedFor) {
      this.metrics?.events.inc({ event: "killed" });
    } else if (!this.retired.has(sandbox)) {
      this.metrics?.events.inc({ event: "crashed" });
      this.logger.warn(
        {
          event: "sandbox_crashed",
          sandbox: sandbox.id,
          workspaceId: sandbox.workspaceId,
          exit: how,
          stderr: stderrTail,
        },
        "a sandbox exited on its own; it is dropped",
      );
    }
    this.refill();
    this.changed();
  }

  private afterTask(lease: Lease): void {
    this.refill();
    if (lease.sandbox && !lease.sandbox.alive) lease.sandbox = null;
    if (lease.pending > 0 || this.closed) return;
    if (!lease.sandbox) {
      this.forgetLease(lease);
      return;
    }
    lease.idleTimer = setTimeout(() => {
      if (lease.pending === 0) this.endLease(lease, "reaped");
    }, this.options.idleMs);
    lease.idleTimer.unref();
    this.changed();
  }

  /** Ends a lease: its sandbox is destroyed (never reused) and, unless `refill` is false, the pool refills. */
  private endLease(lease: Lease, event: "reaped" | "evicted", refill = true): void {
    this.forgetLease(lease);
    const sandbox = lease.sandbox;
    lease.sandbox = null;
    if (sandbox) {
      this.retired.add(sandbox);
      this.all.delete(sandbox);
      void sandbox.destroy();
      this.metrics?.events.inc({ event });
      this.logger.info(
        {
          event: `sandbox_${event}`,
          sandbox: sandbox.id,
          workspaceId: lease.workspaceId,
          executions: sandbox.executions,
        },
        event === "reaped" ? "idle sandbox reaped" : "idle sandbox evicted to make room",
      );
    }
    if (refill) this.refill();
    this.changed();
  }

  private forgetLease(lease: Lease): void {
    if (lease.idleTimer) clearTimeout(lease.idleTimer);
    lease.idleTimer = null;
    if (this.leases.get(lease.workspaceId) === lease) this.leases.delete(lease.workspaceId);
  }

  /** Starts unassigned sandboxes until `warm` exist (within the cap), unless backing off after failures. */
  private refill(): void {
    if (this.closed || this.makingRoom) return;
    const target = Math.min(this.options.warm, this.options.maxSandboxes);
    while (this.unassigned.size < target && this.all.size < this.options.maxSandboxes) {
      const wait = this.backoffUntil - Date.now();
      if (wait > 0) {
        if (!this.refillTimer) {
          this.refillTimer = setTimeout(() => {
            this.refillTimer = null;
            this.refill();
          }, wait);
          this.refillTimer.unref();
        }
        return;
      }
      this.unassigned.add(this.spawn());
    }
  }

  private changed(): void {
    if (this.metrics) {
      const counts = { starting: 0, warm: 0, leased: 0 };
      for (const d of this.describe()) counts[d.state]++;
      for (const [state, n] of Object.entries(counts)) this.metrics.sandboxes.set({ state }, n);
      this.metrics.size.set(this.all.size);
    }
    for (const listener of [...this.changeListeners]) listener();
  }
}
