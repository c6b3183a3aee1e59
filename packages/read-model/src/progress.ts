/** In-process signal "the checkpoint moved", so waiters need not poll the table between batches. */

/** Listeners notified after every committed batch (and on projector failures, with the message). */
export class Progress {
  private readonly listeners = new Set<() => void>();
  /** The projector's last failure message, cleared by the next committed batch. */
  lastError: string | undefined;

  /** Resolves on the next {@link notify} or after `ms`, whichever is first. */
  next(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.listeners.add(done);
    });
  }

  /** Wakes every pending {@link next}. */
  notify(): void {
    for (const l of [...this.listeners]) l();
  }
}
