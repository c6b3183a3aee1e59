/**
 * Errors of the lifecycle engine (Temporal) as the approval service sees it. Mapped to gRPC codes
 * in src/errors.ts. Messages never carry payloads or external data.
 */

/** The Temporal server cannot be reached (or refused the call for a reason that is not ours). */
export class LifecycleEngineUnavailable extends Error {
  override name = "LifecycleEngineUnavailable";
  /** @param tlsProblem what a TLS handshake with the server found (service-kit's probeTemporalTls), if anything. */
  constructor(
    readonly address: string,
    readonly operation: string,
    tlsProblem?: string,
  ) {
    super(
      tlsProblem
        ? `the lifecycle engine (Temporal at ${address}, TEMPORAL_ADDRESS, over TLS) could not ${operation}: ${tlsProblem}; fix the TEMPORAL_TLS_* settings, then retry`
        : `the lifecycle engine (Temporal at ${address}, TEMPORAL_ADDRESS) could not ${operation}; start the Temporal server (gatehouse dev starts one) or fix TEMPORAL_ADDRESS, then retry`,
    );
  }
}

/**
 * The action's workflow ended (failed) without a final outcome for the decision, e.g. the apply
 * could not be carried out. The action stays as the log shows it.
 */
export class ActionLifecycleFailed extends Error {
  override name = "ActionLifecycleFailed";
  constructor(
    readonly actionId: number,
    readonly workflowMessage: string,
  ) {
    super(
      `action ${actionId}: its lifecycle workflow ended without an outcome (${workflowMessage}); the action stays as GetAction shows it — see the lifecycle worker's logs`,
    );
  }
}
