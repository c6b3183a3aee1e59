/**
 * The numbers both halves of the apply protocol (gatekeeper.proto ApplyAction / ApplyActions) agree
 * on, defined once: the caller (caller.ts) sends and waits by them, the server (server.ts) reads
 * and keeps them.
 */

/**
 * gRPC metadata key of ApplyActions carrying the caller's longest wait for one action of the run,
 * in ms (decimal). The server bounds each action's `ApplyContext.deadline` by its start plus this
 * (never past the call's own deadline); without it only the call's deadline bounds the actions.
 * ApplyAction uses the call's deadline for this; a run has one deadline for many actions.
 */
export const APPLY_MAX_MS_METADATA = "gatehouse-apply-max-ms";

/** Default longest wait for one apply, per gatekeeper kind: 15 minutes, in ms. */
export const DEFAULT_APPLY_MAX_MS = 15 * 60 * 1000;

/** How often the server repeats `running` while an apply is in flight, in milliseconds. */
export const APPLY_PROGRESS_EVERY_MS = 2000;
