/**
 * Starts a real `nats-server` child process on loopback — for tests, benches and local split mode.
 * Needs the `nats-server` binary on PATH (Debian package `nats-server`; `npm run setup` installs it).
 */
import type { ChildProcess } from "node:child_process";
import { freePort, spawnTiedToParent, waitForPort } from "@gatehouse/service-kit";

/** A running nats-server. */
export interface NatsServerProcess {
  /** "nats://127.0.0.1:<port>" ("tls://…" when started with `tls`). */
  url: string;
  port: number;
  /** Kills it (SIGKILL) and waits for exit — a crash, as far as clients can tell. */
  kill(): Promise<void>;
  /** Starts it again on the same port; resolves once it accepts connections. */
  restart(): Promise<void>;
  /** Stops it for good. */
  close(): Promise<void>;
}

/** TLS of a test nats-server: its certificate and key, and (for mTLS) the CA its clients' certificates must chain to. */
export interface NatsServerTls {
  certFile: string;
  keyFile: string;
  /** With it the server requires and verifies client certificates (--tlsverify). */
  clientCaFile?: string;
}

/**
 * Starts nats-server on `port` (0 = a free one) and resolves once it accepts TCP connections (≤ 60 s).
 * With `tls` the server requires TLS (--tls, and --tlsverify when `clientCaFile` is given).
 */
export async function startNatsServer(
  options: { port?: number; tls?: NatsServerTls } = {},
): Promise<NatsServerProcess> {
  const port = options.port || (await freePort());
  const tls = options.tls;
  const tlsArgs = tls
    ? [
        "--tls",
        "--tlscert",
        tls.certFile,
        "--tlskey",
        tls.keyFile,
        ...(tls.clientCaFile ? ["--tlscacert", tls.clientCaFile, "--tlsverify"] : []),
      ]
    : [];
  let child: ChildProcess | undefined;
  const start = async () => {
    // Tied to this process: a test or bench killed midway leaves no nats-server behind.
    const proc = spawnTiedToParent("nats-server", ["-a", "127.0.0.1", "-p", String(port), ...tlsArgs], {
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
  return {
    url: `${tls ? "tls" : "nats"}://127.0.0.1:${port}`,
    port,
    kill: stop,
    restart: start,
    close: stop,
  };
}
