/**
 * Starts a real `nats-server` child process on loopback — for tests, benches and local split mode.
 * Needs the `nats-server` binary on PATH (Debian package `nats-server`; `npm run setup` installs it).
 */
import type { ChildProcess } from "node:child_process";
import { freePort, spawnTiedToParent, waitForPort } from "@gatehouse/service-kit";

/** A running nats-server. */
export interface NatsServerProcess {
  /** "nats://127.0.0.1:<port>". */
  url: string;
  port: number;
  /** Kills it (SIGKILL) and waits for exit — a crash, as far as clients can tell. */
  kill(): Promise<void>;
  /** Starts it again on the same port; resolves once it accepts connections. */
  restart(): Promise<void>;
  /** Stops it for good. */
  close(): Promise<void>;
}

/** Starts nats-server on `port` (0 = a free one) and resolves once it accepts TCP connections (≤ 60 s). */
export async function startNatsServer(options: { port?: number } = {}): Promise<NatsServerProcess> {
  const port = options.port || (await freePort());
  let child: ChildProcess | undefined;
  const start = async () => {
    // Tied to this process: a test or bench killed midway leaves no nats-server behind.
    const proc = spawnTiedToParent("nats-server", ["-a", "127.0.0.1", "-p", String(port)], {
      stdio: "ignore",
    });
    child = proc;
    const failed = new Promise<never>((_, reject) => {
      proc.once("error", (err) =>
        reject(
          new Error(`cannot start nats-server (${err.message}); install it (Debian package nats-server)`),
        ),
      );
      proc.once("exit", (code) =>
        reject(new Error(`nats-server exited with code ${code} before accepting connections`)),
      );
    });
    await Promise.race([waitForPort(port, { name: "nats-server", timeoutMs: 60_000 }), failed]);
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    proc.kill("SIGKILL");
    await exited;
  };
  await start();
  return { url: `nats://127.0.0.1:${port}`, port, kill: stop, restart: start, close: stop };
}
