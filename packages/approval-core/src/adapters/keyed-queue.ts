/**
 * Per-key promise queue: tasks with the same key run one after another, in call order; tasks with
 * different keys run concurrently. Used to serialize work per workspace inside one process.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every task queued earlier under `key`; resolves/rejects with its outcome. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(task, task);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** Resolves once every task queued so far has settled. */
  async idle(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }
}
