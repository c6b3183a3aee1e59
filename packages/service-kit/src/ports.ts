/** Loopback TCP port helpers for starting local servers (dev stack, tests, benches). */
import { readFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";

/** Ports freePort draws from: below Linux's default ephemeral range (32768–60999) and the NodePort range (30000–32767). */
export const FREE_PORT_RANGE = { low: 15000, high: 29999 } as const;

/**
 * The kernel's ephemeral (outgoing connection) port range, from /proc/sys/net/ipv4/ip_local_port_range;
 * undefined where that file is missing or unreadable (not Linux).
 */
function ephemeralRange(): { low: number; high: number } | undefined {
  try {
    const [low = Number.NaN, high = Number.NaN] = readFileSync(
      "/proc/sys/net/ipv4/ip_local_port_range",
      "utf8",
    )
      .trim()
      .split(/\s+/)
      .map(Number);
    return Number.isInteger(low) && Number.isInteger(high) ? { low, high } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `port` can be bound on `host` now (the probe listener is closed before this resolves). */
function canBind(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** What listen(0) gives: a port from the kernel's ephemeral range. */
function kernelPickedPort(host: string): Promise<number> {
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

/**
 * A TCP port free on `host` (default 127.0.0.1) at the time of the call, for a server started right after.
 * Drawn at random from FREE_PORT_RANGE, outside the kernel's ephemeral range: a port from listen(0)
 * is an ephemeral one, which any outgoing connection (a gRPC client, a port-forward) may take as its
 * local port between this call and the server's bind — `EADDRINUSE` under load. Falls back to
 * listen(0) when the kernel's ephemeral range overlaps FREE_PORT_RANGE or 200 draws were all taken.
 */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  const eph = ephemeralRange();
  const { low, high } = FREE_PORT_RANGE;
  if (!eph || eph.low > high || eph.high < low) {
    for (let i = 0; i < 200; i++) {
      const port = low + Math.floor(Math.random() * (high - low + 1));
      if (await canBind(port, host)) return port;
    }
  }
  return kernelPickedPort(host);
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
