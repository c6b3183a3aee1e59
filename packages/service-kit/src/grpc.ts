/** gRPC plumbing shared by every Gatehouse service: bind on loopback, stop gracefully, call a unary method as a promise. */
import { type CallOptions, Metadata, type Server, ServerCredentials, type ServiceError } from "@grpc/grpc-js";

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

/** A unary method of a generated grpc-js client (ts-proto `outputServices=grpc-js`). */
export type UnaryMethod<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (err: ServiceError | null, res: Res) => void,
) => unknown;

/**
 * Calls a unary method of `client` with a deadline (`timeoutMs`, default 60 s) and resolves its response.
 * @throws the ServiceError (its `code` is the gRPC status) unchanged.
 */
export function callUnary<Req, Res>(
  client: object,
  method: UnaryMethod<Req, Res>,
  req: Req,
  timeoutMs = 60_000,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    method.call(client, req, new Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
}
