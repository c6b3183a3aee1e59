/** Errors of the read model. */

/**
 * The read model has not caught up with the position a query needs within the wait (the projector is
 * behind, failing, or no replica holds the projector lock). The approval service answers UNAVAILABLE.
 */
export class ReadModelBehind extends Error {
  override name = "ReadModelBehind";
  /**
   * @param checkpoint the stored checkpoint when the wait ended (global position).
   * @param wanted the global position the caller waited for.
   * @param timeoutMs how long it waited, ms.
   * @param cause the projector's last failure, when it is failing.
   */
  constructor(
    readonly checkpoint: number,
    readonly wanted: number,
    readonly timeoutMs: number,
    cause?: string,
  ) {
    super(
      `read model is at position ${checkpoint}, wanted ${wanted}: not caught up within ${timeoutMs} ms` +
        (cause ? ` (projector failing: ${cause})` : ""),
    );
  }
}
