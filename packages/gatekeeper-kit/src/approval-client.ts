/**
 * Promise wrapper over the generated `ApprovalQueueClient` (proto/gatehouse/v1/approval.proto).
 * Every call carries the kernel-minted caller token; the token is never logged. A call whose reply
 * is lost (DEADLINE_EXCEEDED, UNAVAILABLE) is retried a bounded number of times with the same
 * request (retry.ts): the approval service answers a retried SubmitAction (same local id) and a
 * retried AuthorizeObservation (same request id, made here once per read) with what it recorded.
 * Errors from the approval service become `ApprovalRefused` naming the RPC and the status (not the token).
 */
import { randomUUID } from "node:crypto";
import {
  type ActionDescription,
  type ActionRecord,
  type AppliedLocalId,
  ApprovalQueueClient,
  type AuthorizeObservationRequest,
  type AuthorizeObservationResponse,
  type ObservationDescription,
  type SubmitActionRequest,
  type SubmitActionResponse,
  type UnappliedAction,
} from "@gatehouse/proto";
import { PEER_CHANNEL_OPTIONS } from "@gatehouse/service-kit";
import type { ServiceTracing } from "@gatehouse/telemetry";
import { type CallOptions, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { ApprovalRefused } from "./errors.ts";
import { checkRetryPolicy, DEFAULT_RETRY_POLICY, type RetryPolicy, withRetries } from "./retry.ts";

/** The ApprovalQueue calls a gatekeeper makes (plus `close`). */
export interface ApprovalQueue {
  /**
   * Appends ObservationRecorded; resolves to the observation's log id (a positive integer).
   * Return the data read only after this resolved. Retries carry one request id, so a lost reply
   * never records the read twice. @throws ApprovalRefused.
   */
  authorizeObservation(callerToken: string, description: ObservationDescription): Promise<number>;
  /**
   * Appends ActionSubmitted (pending); resolves to the action's log id. `localId` is the
   * gatekeeper-local id (a provisional id such as "~1", or a uuid), unique per binding;
   * `payloadJson` is what ApplyAction receives back. A retry after a lost reply resolves to the
   * action recorded the first time. @throws ApprovalRefused.
   */
  submitAction(
    callerToken: string,
    localId: string,
    description: ActionDescription,
    payloadJson: string,
  ): Promise<number>;
  /** The action record as the caller's binding may see it. @throws ApprovalRefused (e.g. NOT_FOUND). */
  getActionForCaller(callerToken: string, actionId: number): Promise<ActionRecord>;
  /**
   * The caller's binding's writes not yet applied, failed or rejected, in submission order, with
   * their staged payloads, and every local id the binding used (to rebuild an overlay and the
   * provisional-id counter after a restart), and what each applied provisional id ("~N") became
   * (`applied`: its local id and result_json, in submission order). @throws ApprovalRefused.
   */
  listUnappliedForCaller(
    callerToken: string,
  ): Promise<{ actions: UnappliedAction[]; usedLocalIds: string[]; applied?: AppliedLocalId[] }>;
  /** Closes the gRPC channel; later calls fail. */
  close(): void;
}

function refused(rpc: string, err: ServiceError & { attempts?: number }): ApprovalRefused {
  const code = status[err.code] ?? String(err.code);
  const tries = (err.attempts ?? 1) > 1 ? ` after ${err.attempts} attempts` : "";
  return new ApprovalRefused(
    `approval service refused ${rpc} (${code})${tries}: ${err.details || "no details"}`,
  );
}

type Unary<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  cb: (err: ServiceError | null, res: Res) => void,
) => unknown;

/** Options of `connectApprovalQueue`. */
export interface ApprovalQueueOptions {
  /** How calls whose reply was lost are retried (default DEFAULT_RETRY_POLICY: 4 attempts of ≤ 60 s). */
  retry?: Partial<RetryPolicy>;
  /** The calling gatekeeper's tracing: each call is then a CLIENT span carrying the trace context. */
  tracing?: ServiceTracing;
}

/**
 * Connects (lazily, insecure channel for the in-cluster/loopback control plane) to `address` ("host:port").
 * @throws Error naming the option when `options.retry` is invalid.
 */
export function connectApprovalQueue(address: string, options: ApprovalQueueOptions = {}): ApprovalQueue {
  const client = new ApprovalQueueClient(address, credentials.createInsecure(), {
    ...PEER_CHANNEL_OPTIONS,
    ...options.tracing?.grpcClientOptions(),
  });
  const policy = checkRetryPolicy({ ...DEFAULT_RETRY_POLICY, ...options.retry });
  const call = <Req, Res>(rpc: string, fn: Unary<Req, Res>, req: Req): Promise<Res> =>
    withRetries(
      policy,
      (deadline) =>
        new Promise<Res>((resolve, reject) => {
          fn.call(client, req, new Metadata(), { deadline }, (err, res) =>
            err ? reject(err) : resolve(res),
          );
        }),
    ).catch((err: ServiceError) => {
      throw refused(rpc, err);
    });
  return {
    async authorizeObservation(callerToken, description) {
      const res = await call<AuthorizeObservationRequest, AuthorizeObservationResponse>(
        "AuthorizeObservation",
        client.authorizeObservation as Unary<AuthorizeObservationRequest, AuthorizeObservationResponse>,
        // One id for this read, sent again on every retry of it.
        { callerToken, description, requestId: randomUUID() },
      );
      return res.observationId;
    },
    async submitAction(callerToken, localId, description, payloadJson) {
      const res = await call<SubmitActionRequest, SubmitActionResponse>(
        "SubmitAction",
        client.submitAction as Unary<SubmitActionRequest, SubmitActionResponse>,
        { callerToken, localId, description, payloadJson },
      );
      return res.actionId;
    },
    getActionForCaller(callerToken, actionId) {
      return call<{ callerToken: string; actionId: number }, ActionRecord>(
        "GetActionForCaller",
        client.getActionForCaller as Unary<{ callerToken: string; actionId: number }, ActionRecord>,
        { callerToken, actionId },
      );
    },
    async listUnappliedForCaller(callerToken) {
      type Res = { actions: UnappliedAction[]; usedLocalIds: string[]; applied: AppliedLocalId[] };
      const res = await call<{ callerToken: string }, Res>(
        "ListUnappliedForCaller",
        client.listUnappliedForCaller as Unary<{ callerToken: string }, Res>,
        { callerToken },
      );
      return { actions: res.actions, usedLocalIds: res.usedLocalIds, applied: res.applied ?? [] };
    },
    close() {
      client.close();
    },
  };
}
