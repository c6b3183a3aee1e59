/**
 * @gatehouse/approval-core: the approval contract (docs/architecture.md) as a pure decider (decide/evolve,
 * the action-log projection, typed errors) plus the adapters shared by the approval service and the
 * lifecycle worker: `WorkspaceStreams` (read, decide, append with expected revision, retry on
 * conflict); it re-exports the gRPC gatekeeper client (`GrpcGatekeeperApplier`: apply, reject
 * notice, revert), which lives with the rest of the apply protocol in @gatehouse/apply-protocol.
 */

// The caller half of the apply protocol, re-exported for the lifecycle worker and the approval service.
export {
  APPLY_MAX_MS_METADATA,
  type ApplyWatch,
  DEFAULT_APPLY_MAX_MS,
  formatMs,
  type GatekeeperApplier,
  GatekeeperCallError,
  type GatekeeperReverter,
  GrpcGatekeeperApplier,
  type GrpcGatekeeperApplierOptions,
  parseGatekeeperAddresses,
  type RunEnd,
  type RunWatch,
} from "@gatehouse/apply-protocol";
export { KeyedQueue } from "./adapters/keyed-queue.ts";
export { submissionTraceparents } from "./adapters/submission-traces.ts";
export { type AppendContext, WorkspaceStreams, workspaceStreamId } from "./adapters/workspace-streams.ts";
export * from "./domain/index.ts";
