/** gRPC plumbing shared by every Gatehouse service: bind on loopback, stop gracefully, call a unary method as a promise. */
import {
  type CallOptions,
  Client,
  connectivityState,
  Metadata,
  type Server,
  ServerCredentials,
  type ServiceError,
} from "@grpc/grpc-js";

/**
 * Binds `server` on host:port without TLS (services talk over loopback or a cluster network
 * secured outside the process). IPv6 literals may be given bare ("::1"). Port 0 picks a free port.
 * @returns the bound port.
 * @throws the bind error (e.g. EADDRINUSE) unchanged.
 */
export function listenGrpc(server: Server, host: string, port: number): Promise<number> {
  const h = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return new Promise((resolve, reject) =>
    server.bindAsync(`${h}:${port}`, ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
}

/**
 * Stops accepting calls and waits for in-flight ones, for at most `graceMs` milliseconds
 * (default 2000); then cancels whatever is left.
 */
export function stopGrpc(server: Server, graceMs = 2000): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}

/**
 * grpc-js channel options for a service's clients of another Gatehouse service (merge them into the
 * client's options). After a failed connection grpc-js waits before the next attempt, growing x1.6
 * from 1 s up to 120 s by default, and a call made while it waits fails at once with
 * UNAVAILABLE. A peer that restarts for a minute (a rolling upgrade) would then look down for up to
 * two more minutes after it is Ready. Here the wait starts at 250 ms and is capped at 5 s, so a
 * restarted peer is reached within about 5 s of accepting connections. Units: milliseconds.
 */
export const PEER_CHANNEL_OPTIONS = {
  "grpc.initial_reconnect_backoff_ms": 250,
  "grpc.max_reconnect_backoff_ms": 5_000,
} as const;

/** A unary method of a generated grpc-js client (ts-proto `outputServices=grpc-js`). */
export type UnaryMethod<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (err: ServiceError | null, res: Res) => void,
) => unknown;

/** Longest wait (ms) of `callUnary` for a peer's channel to reconnect before calling. */
export const PEER_RECONNECT_WAIT_MS = 10_000;

/**
 * Waits, at most `maxMs` milliseconds, while `client`'s channel is in TRANSIENT_FAILURE (its last
 * connection attempt failed and grpc-js waits before the next, see PEER_CHANNEL_OPTIONS). A call made
 * in that state fails at once with UNAVAILABLE, even when the peer came back a moment ago. Resolves at
 * once in any other state (READY; IDLE and CONNECTING connect or queue the call by themselves). Never
 * rejects: a peer still down after `maxMs` fails the call that follows, as before.
 */
export function peerReconnected(client: Client, maxMs: number): Promise<void> {
  if (client.getChannel().getConnectivityState(true) !== connectivityState.TRANSIENT_FAILURE) {
    return Promise.resolve();
  }
  return new Promise((resolve) => client.waitForReady(Date.now() + maxMs, () => resolve()));
}

/**
 * Calls a unary method of `client` with a deadline (`timeoutMs`, default 60 s) and resolves its response.
 * When the peer's channel is between reconnect attempts (a peer restarting, e.g. in a rolling upgrade),
 * waits for it first, at most PEER_RECONNECT_WAIT_MS or half of `timeoutMs`, within the same deadline;
 * the request is sent once either way.
 * @throws the ServiceError (its `code` is the gRPC status) unchanged: UNAVAILABLE when the peer is
 *   still unreachable after the wait.
 */
export async function callUnary<Req, Res>(
  client: object,
  method: UnaryMethod<Req, Res>,
  req: Req,
  timeoutMs = 60_000,
): Promise<Res> {
  const deadline = Date.now() + timeoutMs;
  // At most half the call's time, so a peer still down is answered with its own status (UNAVAILABLE),
  // not with a deadline the wait used up.
  if (client instanceof Client)
    await peerReconnected(client, Math.min(PEER_RECONNECT_WAIT_MS, timeoutMs / 2));
  return new Promise((resolve, reject) => {
    method.call(client, req, new Metadata(), { deadline }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}
