/** Thin gRPC handlers for the Connections service (served by the kernel process): decode, call connections.ts, map errors. */
import type { EventStore } from "@gatehouse/event-store";
import type { ConnectionsServer } from "@gatehouse/proto";
import type { sendUnaryData } from "@grpc/grpc-js";
import {
  decideConnectionRequest,
  getConnectionRequest,
  listConnectionRequests,
  requestConnection,
} from "./connections.ts";
import { toServiceError } from "./errors.ts";
import type { Workspaces } from "./workspaces.ts";

function reply<T>(callback: sendUnaryData<T>, work: () => Promise<T>): void {
  work().then(
    (value) => callback(null, value),
    (err) => callback(toServiceError(err) as never, null),
  );
}

/** Without a deadline, a waiting GetConnectionRequest returns after this long, ms. */
const DEFAULT_WAIT_MS = 10 * 60_000;

/** Builds the Connections service implementation. */
export function connectionsHandlers(deps: { workspaces: Workspaces; store: EventStore }): ConnectionsServer {
  return {
    requestConnection: (call, cb) => reply(cb, () => requestConnection(deps.workspaces, call.request)),
    listConnectionRequests: (call, cb) =>
      reply(cb, async () => ({
        requests: await listConnectionRequests(deps.workspaces, call.request.workspaceId, call.request.state),
      })),
    getConnectionRequest: (call, cb) =>
      reply(cb, () => {
        const { workspaceId, requestId, wait } = call.request;
        if (!wait) return getConnectionRequest(deps.workspaces, deps.store, workspaceId, requestId);
        // Wait until decided, or until shortly before the caller's deadline (then answer "pending").
        const deadline = call.getDeadline();
        const ms = deadline instanceof Date ? deadline.getTime() - Date.now() - 250 : DEFAULT_WAIT_MS;
        const cancelled = new AbortController();
        call.on("cancelled", () => cancelled.abort());
        const signal = AbortSignal.any([AbortSignal.timeout(Math.max(0, ms)), cancelled.signal]);
        return getConnectionRequest(deps.workspaces, deps.store, workspaceId, requestId, signal);
      }),
    decideConnectionRequest: (call, cb) =>
      reply(cb, () => decideConnectionRequest(deps.workspaces, call.request)),
  };
}
