/**
 * The local Temporal server: find the `temporal` CLI (built from the Go module proxy by
 * `npm run setup`) and run `temporal server start-dev` on loopback. Used by `gatehouse dev`
 * (persisting under the data dir) and, through @temporalio/testing's "existing-path" executable,
 * by the tests. Clusters never use this: they set TEMPORAL_ADDRESS.
 */
import type { ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import {
  canConnect,
  describeProcess,
  freePort,
  type ProcessInfo,
  portHolder,
  reapPidFile,
  removePidFile,
  spawnTiedToParent,
  writePidFile,
} from "@gatehouse/service-kit";

/** Re-exported for the tests that already take it from here. */
export { freePort };

/** Raised when the Temporal CLI cannot be found; the message says how to install it. */
export class TemporalCliMissing extends Error {
  override name = "TemporalCliMissing";
}

const INSTALL_HINT =
  "install it with `npm run setup` (go install github.com/temporalio/cli/cmd/temporal@v1.5.1), or set GATEHOUSE_TEMPORAL_CLI to its path, or set TEMPORAL_ADDRESS to use a running server";

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Path of the `temporal` CLI: GATEHOUSE_TEMPORAL_CLI, else `temporal` on PATH, else the Go bin
 * directories ($GOBIN, $GOPATH/bin, ~/go/bin).
 * @throws TemporalCliMissing naming how to install it.
 */
export function findTemporalCli(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.GATEHOUSE_TEMPORAL_CLI;
  if (explicit) {
    if (executable(explicit)) return explicit;
    throw new TemporalCliMissing(
      `GATEHOUSE_TEMPORAL_CLI=${explicit} is not an executable file; ${INSTALL_HINT}`,
    );
  }
  const dirs = [
    ...(env.PATH ?? "").split(delimiter).filter(Boolean),
    ...(env.GOBIN ? [env.GOBIN] : []),
    ...(env.GOPATH ? [join(env.GOPATH, "bin")] : []),
    join(env.HOME ?? homedir(), "go", "bin"),
  ];
  for (const dir of dirs) {
    const candidate = join(dir, "temporal");
    if (executable(candidate)) return candidate;
  }
  throw new TemporalCliMissing(`the Temporal CLI (temporal) was not found; ${INSTALL_HINT}`);
}

export interface TemporalDevServerOptions {
  /** SQLite file for persistence across restarts; omitted = in memory. */
  dbFile?: string;
  /** Frontend gRPC port on 127.0.0.1; 0 or omitted = a free port. */
  port?: number;
  /** Namespace created at start (default "default"). */
  namespace?: string;
  /** How long to wait for the server to accept connections, ms (default 120000: slow on a busy machine). */
  startTimeoutMs?: number;
  /**
   * Pid file of the server (`gatehouse dev`: `<data dir>/temporal.pid`). A server that file names
   * which is still running — a leftover of a start whose process was killed — is stopped first,
   * when its command line is a `temporal server start-dev` on the same `dbFile`.
   */
  pidFile?: string;
}

export interface TemporalDevServer {
  /** "127.0.0.1:<port>", for Connection.connect / NativeConnection.connect. */
  address: string;
  namespace: string;
  /** The leftover server the pid file named, which this start stopped first (absent: none). */
  stoppedLeftover?: ProcessInfo;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s). */
  close(): Promise<void>;
}

/**
 * Starts `temporal server start-dev --headless` bound to 127.0.0.1, as a child that dies with this
 * process however it dies (see service-kit's `spawnTiedToParent`).
 * @throws TemporalCliMissing; Error when the port is taken (naming the pid and command line of
 *   what holds it), or the server exits or does not listen in time (with its output).
 */
export async function startTemporalDevServer(
  options: TemporalDevServerOptions = {},
): Promise<TemporalDevServer> {
  const cli = findTemporalCli();
  let stoppedLeftover: ProcessInfo | undefined;
  if (options.pidFile) {
    const db = options.dbFile;
    stoppedLeftover = await reapPidFile(
      options.pidFile,
      (command) => /\bserver start-dev\b/.test(command) && (!db || command.includes(`--db-filename ${db}`)),
    );
  }
  const port = options.port || (await freePort());
  if (await canConnect(port)) {
    // Without this check a leftover server (e.g. from a killed `gatehouse dev`) would answer on the
    // port while the new one fails to bind, and its state would silently be used.
    const holder = await portHolder(port);
    throw new Error(
      holder
        ? `port ${port} on 127.0.0.1 (the Temporal dev server's) is already in use by ${describeProcess(holder)}; stop it (kill ${holder.pid}) or choose another port`
        : `port ${port} on 127.0.0.1 (the Temporal dev server's) is already in use; stop what holds it (\`ss -ltnp 'sport = :${port}'\` names it) or choose another port`,
    );
  }
  const namespace = options.namespace ?? "default";
  const args = [
    "server",
    "start-dev",
    "--headless",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--http-port",
    String(await freePort()),
    "--metrics-port",
    String(await freePort()),
    "--namespace",
    namespace,
    "--log-level",
    "error",
    // Lets the server hand an activity scheduled by a workflow task straight back to the worker that
    // completed it (one round trip less per approve → apply).
    "--dynamic-config-value",
    "system.enableActivityEagerExecution=true",
  ];
  if (options.dbFile) args.push("--db-filename", options.dbFile);
  const child: ChildProcess = spawnTiedToParent(cli, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  while (!(await canConnect(port))) {
    if (child.exitCode !== null) {
      throw new Error(`temporal server start-dev exited with code ${child.exitCode}: ${output.trim()}`);
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(
        `temporal server start-dev did not listen on 127.0.0.1:${port} in time: ${output.trim()}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const pid = child.pid ?? 0;
  if (options.pidFile && pid) writePidFile(options.pidFile, pid);
  return {
    address: `127.0.0.1:${port}`,
    namespace,
    ...(stoppedLeftover ? { stoppedLeftover } : {}),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          if (options.pidFile) removePidFile(options.pidFile, pid);
          return resolve();
        }
        const kill = setTimeout(() => child.kill("SIGKILL"), 5000);
        child.once("exit", () => {
          clearTimeout(kill);
          if (options.pidFile) removePidFile(options.pidFile, pid);
          resolve();
        });
        child.kill("SIGTERM");
      }),
  };
}
