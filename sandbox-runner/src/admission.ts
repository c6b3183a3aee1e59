/**
 * Admission of executions to the runner: at most `slots` admitted at once (queued in their workspace's
 * pool lane or running); past that, callers wait first-in first-out for a slot, for at most `waitMs`,
 * and at most `maxWaiting` of them. A burst (e.g. 50 agent sessions on one workspace) is then served in
 * arrival order instead of being refused, while a runner that stays overloaded still says so.
 */

/** Why an execution was not admitted. */
export class AdmissionRefused extends Error {
  override name = "AdmissionRefused";
}

interface Waiter {
  grant: () => void;
  refuse: (err: Error) => void;
}

/** Counts admitted executions and queues the rest. */
export class Admission {
  private admitted = 0;
  private readonly waiting: Waiter[] = [];

  /**
   * @param slots executions admitted at once (SANDBOX_MAX_CONCURRENT), ≥ 1.
   * @param maxWaiting callers allowed to wait for a slot (SANDBOX_MAX_WAITING), ≥ 0.
   * @param waitMs longest wait for a slot, ms (SANDBOX_ADMISSION_WAIT_MS), ≥ 0.
   */
  constructor(
    readonly slots: number,
    readonly maxWaiting: number,
    readonly waitMs: number,
  ) {}

  /** Executions admitted now. */
  get active(): number {
    return this.admitted;
  }

  /** Callers waiting for a slot now. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Resolves with a release function once the caller holds a slot; call it exactly once when the
   * execution has finished (later calls do nothing).
   * @throws AdmissionRefused at once when `maxWaiting` callers already wait, or after `waitMs`
   *   without a slot; the message names the limits and their variables.
   * @throws the signal's reason when `signal` aborts while waiting (the slot is not taken).
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.admitted < this.slots) {
      this.admitted++;
      return Promise.resolve(this.releaser());
    }
    if (this.waiting.length >= this.maxWaiting) {
      return Promise.reject(
        new AdmissionRefused(
          `the runner is at its limit: ${this.slots} executions admitted (SANDBOX_MAX_CONCURRENT) and ` +
            `${this.waiting.length} waiting (SANDBOX_MAX_WAITING); retry later`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
      };
      const waiter: Waiter = {
        grant: () => {
          settle();
          resolve(this.releaser());
        },
        refuse: (err) => {
          settle();
          reject(err);
        },
      };
      const onAbort = () => waiter.refuse(signal?.reason);
      const timer = setTimeout(
        () =>
          waiter.refuse(
            new AdmissionRefused(
              `no execution slot became free within ${this.waitMs} ms (SANDBOX_ADMISSION_WAIT_MS): all ` +
                `${this.slots} (SANDBOX_MAX_CONCURRENT) stayed busy; retry later`,
            ),
          ),
        this.waitMs,
      );
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting[0];
      // The slot passes straight to the first waiter, so the count never dips and a newcomer
      // cannot take it ahead of the queue.
      if (next) next.grant();
      else this.admitted--;
    };
  }
}
