/**
 * In-process gRPC servers for the kit's tests, on loopback: a Gatekeeper implementing what a
 * test gives it (e.g. OpenSession by the kit's `serveSession`), and a recording ApprovalQueue (it
 * stands in for services/approval, which a shared package may not import; its real behaviour is
 * tested there).
 */
import {
  type ActionRecord,
  ActionStatus,
  type ApprovalQueueServer,
  ApprovalQueueService,
  GatekeeperClient,
  type GatekeeperServer,
  GatekeeperService,
  type ObservationDescription,
} from "@gatehouse/proto";
import { credentials, Server, ServerCredentials, type ServiceError, status } from "@grpc/grpc-js";
import { type SessionHandlers, serveSession } from "../src/session-server.ts";

function bind(server: Server): Promise<number> {
  return new Promise((res, rej) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
  );
}

const unimplemented = (_call: unknown, cb: (e: Partial<ServiceError>) => void) =>
  cb({ code: status.UNIMPLEMENTED, details: "not used by this test" });

/**
 * A Gatekeeper gRPC server on loopback implementing `impl`; every RPC it leaves out answers
 * UNIMPLEMENTED. Returns a client for it and its "127.0.0.1:port".
 */
export async function startGatekeeper(
  impl: Partial<GatekeeperServer>,
): Promise<{ client: GatekeeperClient; address: string; close(): void }> {
  const server = new Server();
  const full: GatekeeperServer = {
    resolveResource: unimplemented,
    openSession: (call) => {
      call.emit("error", { code: status.UNIMPLEMENTED, details: "not used by this test" });
    },
    applyAction: (call) => {
      call.emit("error", { code: status.UNIMPLEMENTED, details: "not used by this test" });
    },
    applyActions: (call) => {
      call.emit("error", { code: status.UNIMPLEMENTED, details: "not used by this test" });
    },
    actionRejected: unimplemented,
    prepareRevert: unimplemented,
    checkObserver: unimplemented,
    ...impl,
  };
  server.addService(GatekeeperService, full);
  const port = await bind(server);
  const client = new GatekeeperClient(`127.0.0.1:${port}`, credentials.createInsecure());
  return {
    client,
    address: `127.0.0.1:${port}`,
    close() {
      client.close();
      server.forceShutdown();
    },
  };
}

/** A Gatekeeper gRPC server whose sessions are served by `handlers`, and a client for it. */
export function startSessionServer(
  handlers: SessionHandlers,
): Promise<{ client: GatekeeperClient; close(): void }> {
  return startGatekeeper({ openSession: (call) => serveSession(call, handlers) });
}

/**
 * A recording ApprovalQueue on loopback. Like the real service it answers a retry (same local id,
 * same observation request id) with the id it gave the first time, and it can lose replies.
 */
export class RecordingApprovalQueue {
  /** Every AuthorizeObservation received, retries included. */
  readonly observations: { callerToken: string; description: ObservationDescription; requestId: string }[] =
    [];
  /** Every SubmitAction received, retries included. */
  readonly submissions: { callerToken: string; localId: string; payloadJson: string }[] = [];
  /** When set, every call fails with this status. */
  refuse: status | null = null;
  /** Statuses the next calls fail with, one per call (after recording the request). */
  failNext: status[] = [];
  /** How many of the next replies are lost: the request is recorded and never answered. */
  dropReplies = 0;
  port = 0;
  #next = 1;
  #ids = new Map<string, number>();
  #server = new Server();

  /** The id recorded under `key`, or a new one; then the reply (or none when it is dropped). */
  #answer<T>(
    key: string,
    cb: (e: Partial<ServiceError> | null, r?: T) => void,
    reply: (id: number) => T,
  ): void {
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = this.#next++;
      if (key) this.#ids.set(key, id);
    }
    const fail = this.failNext.shift();
    if (fail !== undefined) {
      cb({ code: fail, details: "failed by test" });
    } else if (this.dropReplies > 0) {
      this.dropReplies--; // the reply is lost: the client's deadline passes
    } else {
      cb(null, reply(id));
    }
  }

  async start(): Promise<this> {
    const impl: ApprovalQueueServer = {
      authorizeObservation: (call, cb) => {
        if (this.refuse !== null) return cb({ code: this.refuse, details: "refused by test" });
        const r = call.request;
        this.observations.push({
          callerToken: r.callerToken,
          description: r.description!,
          requestId: r.requestId,
        });
        this.#answer(r.requestId && `obs:${r.requestId}`, cb, (observationId) => ({ observationId }));
      },
      submitAction: (call, cb) => {
        if (this.refuse !== null) return cb({ code: this.refuse, details: "refused by test" });
        const r = call.request;
        this.submissions.push({ callerToken: r.callerToken, localId: r.localId, payloadJson: r.payloadJson });
        this.#answer(`act:${r.localId}`, cb, (actionId) => ({
          actionId,
          status: ActionStatus.ACTION_STATUS_PENDING,
        }));
      },
      // Not used by these tests: the MCP gatekeeper keeps no overlay to rebuild.
      listUnappliedForCaller: (_call, cb) => cb({ code: 12, details: "not used by these tests" }),
      getActionForCaller: (call, cb) => {
        if (this.refuse !== null) return cb({ code: this.refuse, details: "refused by test" });
        const rec: ActionRecord = {
          id: call.request.actionId,
          workspaceId: "ws-1",
          binding: "REPO",
          localId: "~1",
          description: undefined,
          status: ActionStatus.ACTION_STATUS_PENDING,
          dependsOn: [],
          caller: undefined,
          submittedAt: "",
          decidedBy: "",
          decidedAt: "",
          reason: "",
          cascadedFrom: 0,
          resultJson: "",
          outcomeUnknown: false,
          executionId: "exec-1",
          lastRevision: 0,
          chatStartedBy: "",
          descriptionDigest: "",
          withdrawnBy: "",
        };
        cb(null, rec);
      },
    };
    this.#server.addService(ApprovalQueueService, impl);
    this.port = await bind(this.#server);
    return this;
  }

  close(): void {
    this.#server.forceShutdown();
  }
}
