/**
 * Promise wrapper over the generated `ApprovalQueueClient` (proto/gatehouse/v1/approval.proto).
 * Every call carries the kernel-minted caller token; the token is never logged. Errors from the
 * approval service become `ApprovalRefused` naming the RPC and the status (not the token).
 */

import {
  type ActionDescription,
  type ActionRecord,
  ApprovalQueueClient,
  type AuthorizeObservationRequest,
  type AuthorizeObservationResponse,
  type ObservationDescription,
  type SubmitActionRequest,
  type SubmitActionResponse,
  type UnappliedAction,
} from "@gatehouse/proto";
import { credentials, type ServiceError, status } from "@grpc/grpc-js";
import { ApprovalRefused } from "./errors.ts";

/** The ApprovalQueue calls a gatekeeper makes (plus `close`). */
export interface ApprovalQueue {
  /**
   * Appends ObservationRecorded; resolves to the observation's log id (a positive integer).
   * Return the data read only after this resolved. @throws ApprovalRefused.
   */
  authorizeObservation(callerToken: string, description: ObservationDescription): Promise<number>;
  /**
   * Appends ActionSubmitted (pending); resolves to the action's log id. `localId` is the
   * gatekeeper-local id (a provisional id such as "~1", or a uuid), unique per binding;
   * `payloadJson` is what ApplyAction receives back. @throws ApprovalRefused.
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
   * provisional-id counter after a restart). @throws ApprovalRefused.
   */
  listUnappliedForCaller(
    callerToken: string,
  ): Promise<{ actions: UnappliedAction[]; usedLocalIds: string[] }>;
  /** Closes the gRPC channel; later calls fail. */
  close(): void;
}

function refused(rpc: string, err: ServiceError): ApprovalRefused {
  const code = status[err.code] ?? String(err.code);
  return new ApprovalRefused(`approval service refused ${rpc} (${code}): ${err.details || "no details"}`);
}

function call<Req, Res>(
  rpc: string,
  fn: (req: Req, cb: (err: ServiceError | null, res: Res) => void) => unknown,
  req: Req,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    fn(req, (err, res) => (err ? reject(refused(rpc, err)) : resolve(res)));
  });
}

/** Connects (lazily, insecure channel for the in-cluster/loopback control plane) to `address` ("host:port"). */
export function connectApprovalQueue(address: string): ApprovalQueue {
  const client = new ApprovalQueueClient(address, credentials.createInsecure());
  return {
    async authorizeObservation(callerToken, description) {
      const res = await call<AuthorizeObservationRequest, AuthorizeObservationResponse>(
        "AuthorizeObservation",
        client.authorizeObservation.bind(client),
        {
          callerToken,
          description,
        },
      );
      return res.observationId;
    },
    async submitAction(callerToken, localId, description, payloadJson) {
      const res = await call<SubmitActionRequest, SubmitActionResponse>(
        "SubmitAction",
        client.submitAction.bind(client),
        {
          callerToken,
          localId,
          description,
          payloadJson,
        },
      );
      return res.actionId;
    },
    getActionForCaller(callerToken, actionId) {
      return call("GetActionForCaller", client.getActionForCaller.bind(client), { callerToken, actionId });
    },
    async listUnappliedForCaller(callerToken) {
      const res = await call<{ callerToken: string }, { actions: UnappliedAction[]; usedLocalIds: string[] }>(
        "ListUnappliedForCaller",
        client.listUnappliedForCaller.bind(client),
        { callerToken },
      );
      return { actions: res.actions, usedLocalIds: res.usedLocalIds };
    },
    close() {
      client.close();
    },
  };
}
