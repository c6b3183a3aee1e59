/** gRPC server lifecycle shared by every Gatehouse service: bind on loopback, stop gracefully. */
import { type Server, ServerCredentials } from "@grpc/grpc-js";

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
