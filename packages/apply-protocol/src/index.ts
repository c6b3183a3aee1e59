/**
 * @gatehouse/apply-protocol: both halves of the apply protocol (gatekeeper.proto ApplyAction and
 * ApplyActions) in one place, with the constants they share (constants.ts).
 *
 * - Caller (caller.ts, run-stream.ts, call-error.ts): `GrpcGatekeeperApplier` (apply, applyRun,
 *   the ActionRejected notice, PrepareRevert), `followRun` (what an ApplyActions stream's messages,
 *   breaks and silences mean), `readApplyOutcome`, `GatekeeperCallError`.
 * - Server (server.ts): `applyStreamHandler` and `applyRunHandler`, the grpc-js handlers every
 *   gatekeeper serves through the gatekeeper kit, which supplies its errors (`ApplyErrors`).
 */
export { formatMs, GatekeeperCallError, REFUSED_BEFORE_ACTING } from "./call-error.ts";
export {
  type ApplyWatch,
  type GatekeeperApplier,
  type GatekeeperReverter,
  GrpcGatekeeperApplier,
  type GrpcGatekeeperApplierOptions,
  parseGatekeeperAddresses,
  readApplyOutcome,
} from "./caller.ts";
export { APPLY_MAX_MS_METADATA, APPLY_PROGRESS_EVERY_MS, DEFAULT_APPLY_MAX_MS } from "./constants.ts";
export { followRun, type RunCall, type RunEnd, type RunWatch } from "./run-stream.ts";
export {
  type ApplyContext,
  type ApplyErrors,
  type ApplyLogger,
  type ApplyMetrics,
  type ApplyServerDeps,
  applyRunHandler,
  applyStreamHandler,
  checkRun,
  notSentAsFailure,
  type RunUnits,
  reportWhileRunning,
} from "./server.ts";
