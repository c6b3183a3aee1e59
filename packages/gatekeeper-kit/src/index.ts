/**
 * @gatehouse/gatekeeper-kit: what every gatekeeper needs, so a new one is mostly API mapping.
 *
 * - Session plumbing: `serveSession` (Gatekeeper.OpenSession → capnweb session whose main object
 *   the gatekeeper supplies), `connectSession` (the caller side), `FrameTransport`, `checkOpenFields`.
 * - Approval: `connectApprovalQueue` (caller token on every call), `observePage` (each page
 *   recorded before it is returned; a failed fetch records nothing), `pageOf`.
 * - Descriptions: `buildDescription` (byte budgets, fenced untrusted text, descriptionIsComplete),
 *   `fenceUntrusted`, `truncateUtf8`; names and one-line texts in every script, invisible
 *   characters as `⟨U+XXXX⟩` tokens, bounded by grapheme (`oneLine` for titles and summaries,
 *   `inlineSafe` in Markdown prose, `codeSpan`); a warning naming values that hold invisible or
 *   direction-control characters (`invisibleValues`, `invisibleNote`).
 * - Simulation: `ProvisionalIds` (`~1`, `~2`, ... and permanent aliases), `PendingOverlay`
 *   (ordered pending writes over reads; drop cascades), `cascadeFrom` / `dependencyClosure`,
 *   `restoreOverlayOnce` (rebuild the overlay and applied provisional ids after a restart).
 * - Reply sizes: `replyBudget`, `textPageBytes`, `checkReplyFits`, `cutTextsToFit` size what a
 *   gatekeeper returns from the sandbox's frame cap (`DEFAULT_MAX_FRAME_BYTES`), before it records
 *   the read, so a reply never ends an execution with a MessageSizeError.
 * - `.d.ts` delivery: `sanitizeDocText`, `docComment`, `assembleInterface`, `methodKey`, `uniqueIdent`.
 * - Errors: `GatekeeperError` and the shared subclasses; `toServiceError` maps them to gRPC.
 * - Apply outcomes (apply-outcome.ts): not sent (`NotSent`, recorded failed), sent with the answer
 *   lost (`AnswerLost`, outcome unknown), answered; `classifyTransportError` and `faultMessage`
 *   turn a transport error into one of them with a message naming the endpoint and the cause.
 * - Conformance (tests only, `@gatehouse/gatekeeper-kit/conformance`): `gatekeeperConformance`,
 *   the suite every gatekeeper runs against its real system before it is wired in.
 * - Process skeleton: `runGatekeeperProcess` (a gatekeeper's `main.ts`: env, logger, tracing,
 *   ops endpoint, signals), `startGatekeeper` (approval client, tracing, gRPC server),
 *   `gatekeeperHandlers` (the Gatekeeper service around the gatekeeper's own parts),
 *   `gatekeeperMetrics` (rpcs, latency, sessions on a registry of its own).
 * - gRPC skeleton: `unaryHandler(method, {metrics, logger}, fn)` wraps a unary handler with
 *   latency and per-status-code metrics, `toServiceError` mapping and message-free logging of
 *   unexpected errors; `applyStreamHandler(deps, fn)` serves the streaming ApplyAction (`running`
 *   while the apply is in flight, then the outcome); `applyRunHandler(deps, fn)` serves the batch
 *   ApplyActions through the same per-action `fn` (in order, stops at the first failure). Both are
 *   @gatehouse/apply-protocol's server half with the kit's errors plugged in (apply.ts).
 */

export {
  APPLY_MAX_MS_METADATA,
  APPLY_PROGRESS_EVERY_MS,
  type ApplyContext,
  type ApplyLogger,
  type RunUnits,
  readApplyOutcome,
} from "@gatehouse/apply-protocol";
export { applyRunHandler, applyStreamHandler, KIT_APPLY_ERRORS, type KitApplyDeps } from "./apply.ts";
export {
  AnswerLost,
  applyFault,
  classifyTransportError,
  endpointOrigin,
  faultMessage,
  NotSent,
  type TransportCause,
  type TransportFault,
} from "./apply-outcome.ts";
export { type ApprovalQueue, type ApprovalQueueOptions, connectApprovalQueue } from "./approval-client.ts";
export { type Cascaded, cascadeFrom, type DependencyNode, dependencyClosure } from "./cascade.ts";
export { readYamlConfigFile, type YamlConfigFileOptions } from "./config-file.ts";
export { contentRisks, MAX_CONTENT_RISKS, type ScannedText } from "./content-risks.ts";
export {
  type BoundedDescription,
  buildDescription,
  CUT_WARNING,
  type DescriptionInput,
  type UntrustedBlock,
} from "./describe.ts";
export {
  assembleInterface,
  type DtsMethod,
  docComment,
  indentLines,
  MAX_DOC_CHARS,
  methodKey,
  sanitizeDocText,
  uniqueIdent,
} from "./dts.ts";
export * from "./errors.ts";
export { CUT_MARKER, fenceUntrusted, truncateUtf8 } from "./fence.ts";
export {
  CUT_MARK_BYTES,
  type CuttableText,
  checkReplyFits,
  cutTextsToFit,
  cutToJsonBytes,
  DEFAULT_MAX_FRAME_BYTES,
  FRAME_ENVELOPE_BYTES,
  MAX_JSON_BYTES_PER_TEXT_BYTE,
  MAX_MAX_FRAME_BYTES,
  MIN_MAX_FRAME_BYTES,
  replyBudget,
  serializedBytes,
  textPageBytes,
} from "./frame-budget.ts";
export { FrameTransport, type FrameTransportOptions } from "./frame-transport.ts";
export { toServiceError } from "./grpc-status.ts";
export {
  bindingNameOf,
  type GatekeeperParts,
  gatekeeperHandlers,
  type HandlerDeps,
} from "./handlers.ts";
export { codeSpan, INLINE_MAX_GRAPHEMES, inlineSafe, oneLine } from "./inline-text.ts";
export { type InvisibleValue, invisibleNote, invisibleValues } from "./invisible-note.ts";
export { type KitLogger, silentLogger } from "./logger.ts";
export { type GatekeeperMetrics, gatekeeperMetrics, metricPrefix } from "./metrics.ts";
export { type ObservedPage, observePage, type PageDescription, type PageSlice, pageOf } from "./observe.ts";
export { PendingOverlay, type PendingWrite } from "./overlay.ts";
export {
  ConfigurationRefused,
  type GatekeeperProcessSpec,
  type ProcessBase,
  runGatekeeperProcess,
  sandboxMaxFrameBytes,
} from "./process.ts";
export { isProvisionalId, ProvisionalIds } from "./provisional-ids.ts";
export { type AppliedResultParser, type RestorableState, restoreOverlayOnce } from "./restore.ts";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.ts";
export { type ServedGatekeeper, type ServeGatekeeperOptions, serveGatekeeper } from "./serve.ts";
export { type ClientSession, connectSession } from "./session-client.ts";
export { BINDING_NAME, checkOpenFields } from "./session-open.ts";
export { redactForCaller, type SessionHandlers, serveSession } from "./session-server.ts";
export {
  type GatekeeperAddress,
  type RunningGatekeeper,
  type StartGatekeeperOptions,
  type StartParts,
  startGatekeeper,
} from "./start.ts";
export { type UnaryDeps, type UnaryLogger, type UnaryMetrics, unaryHandler } from "./unary.ts";
