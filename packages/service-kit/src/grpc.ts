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

/**
 * Time (ms) `callUnary` keeps for the call itself after waiting for its peer: the wait for a
 * reconnecting peer ends this long before the call's deadline (and never takes more than half of it).
 */
export const PEER_CALL_RESERVE_MS = 5_000;

/**
 * How long (ms) `callUnary` with a deadline of `timeoutMs` from now waits for an unreachable peer:
 * `timeoutMs` less {@link PEER_CALL_RESERVE_MS}, and at least half of `timeoutMs` (30 s → 25 s,
 * 60 s → 55 s, 2 s → 1 s).
 */
export function peerWaitMs(timeoutMs: number): number {
  return Math.max(timeoutMs / 2, timeoutMs - PEER_CALL_RESERVE_MS);
}

/**
 * Resolves true once `client`'s channel is READY (at once when it is), connecting it when IDLE;
 * false when it is not READY within `maxMs` milliseconds (the peer is down, or restarting for longer)
 * or the client was closed. Between failed attempts grpc-js waits before the next one (see
 * PEER_CHANNEL_OPTIONS); this wait spans those pauses. Never rejects.
 */
export function peerReady(client: Client, maxMs: number): Promise<boolean> {
  let state: connectivityState;
  try {
    state = client.getChannel().getConnectivityState(true);
  } catch {
    return Promise.resolve(false);
  }
  if (state === connectivityState.READY) return Promise.resolve(true);
  if (maxMs <= 0) return Promise.resolve(false);
  return new Promise((resolve) => client.waitForReady(Date.now() + maxMs, (err) => resolve(!err)));
}

/**
 * Calls a unary method of `client` with a deadline (`timeoutMs`, default 60 s) and resolves its response.
 * A peer that is restarting (a rolling upgrade: the old pod gone, the new one not yet accepting) is
 * waited for instead of failing the call at once with UNAVAILABLE: the call waits until the peer's
 * channel is READY, at most {@link peerWaitMs}(`timeoutMs`), then is sent once with grpc-js's
 * `waitForReady` (a connection lost again before it is sent is waited for too, within the deadline).
 * A peer still unreachable after the wait gets the call without `waitForReady`, so it fails with the
 * peer's own status, UNAVAILABLE, rather than a DEADLINE_EXCEEDED the wait used up.
 * @throws the ServiceError (its `code` is the gRPC status) unchanged.
 */
export async function callUnary<Req, Res>(
  client: object,
  method: UnaryMethod<Req, Res>,
  req: Req,
  timeoutMs = 60_000,
): Promise<Res> {
  const deadline = Date.now() + timeoutMs;
  const ready = client instanceof Client ? await peerReady(client, peerWaitMs(timeoutMs)) : false;
  const metadata = new Metadata();
  // grpc-js reads waitForReady from the metadata's options, not from the call options.
  if (ready) metadata.setOptions({ waitForReady: true });
  return new Promise((resolve, reject) => {
    method.call(client, req, metadata, { deadline }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}
