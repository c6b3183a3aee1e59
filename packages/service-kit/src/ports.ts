/** Loopback TCP port helpers for starting local servers (dev stack, tests, benches). */
import { createConnection, createServer } from "node:net";

/** A TCP port free on `host` (default 127.0.0.1) at the time of the call. */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether something accepts TCP connections on host:port (default host 127.0.0.1). Never throws. */
export function canConnect(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port }, () => {
      socket.end();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Waits until something accepts connections on 127.0.0.1:`port`, checking every 50 ms.
 * `stillRunning` (optional) is asked before each try; when it returns a message the wait fails with it
 * (e.g. the server's process exited).
 * @throws Error naming `name` and the port after `timeoutMs` (default 120 s: start-ups on a busy machine are slow), or `stillRunning`'s message.
 */
export async function waitForPort(
  port: number,
  options: { name: string; timeoutMs?: number; stillRunning?: () => string | undefined },
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stopped = options.stillRunning?.();
    if (stopped) throw new Error(stopped);
    if (await canConnect(port)) return;
    if (Date.now() > deadline)
      throw new Error(`${options.name} did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
