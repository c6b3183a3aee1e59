/**
 * Starts a real PostgreSQL server (Debian's `postgresql` package) on loopback in a fresh data
 * directory — for tests and benches. Not used by the services: they connect to a server the operator runs.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { migratePostgres } from "./postgres-schema.ts";

const run = promisify(execFile);

/** A running test PostgreSQL server. */
export interface PostgresServer {
  /**
   * `postgres://gatehouse@127.0.0.1:<port>/gatehouse`: the superuser `gatehouse` logs in without a
   * password (trust, loopback only); other roles too unless `requirePasswords` was set.
   */
  url: string;
  port: number;
  /** Stops the server (fast shutdown, then SIGKILL after 10 s) and deletes its data directory. */
  stop(): Promise<void>;
  /** The server's log so far: its whole output with `logStatements`, else the last 4000 characters. */
  log(): string;
}

/**
 * The directory holding `initdb` and `postgres`: `$PG_BIN`, else the newest `/usr/lib/postgresql/<major>/bin`.
 * @throws Error naming the Debian package to install when none is found.
 */
export function postgresBinDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = "/usr/lib/postgresql";
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "postgres")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length === 0)
    throw new Error(
      "PostgreSQL is not installed: apt-get install postgresql (or set PG_BIN to its bin directory)",
    );
  return join(root, majors[0] as string, "bin");
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/**
 * initdb + postgres on 127.0.0.1:<free port>, socket in the data directory. PostgreSQL refuses to
 * run as root, so as root both run as the `postgres` user (setpriv). Resolves once a client connects
 * (deadline `startTimeoutMs`, default 60 000 ms: a busy machine passes too). `migrate: true` also creates the
 * Gatehouse schema (what `gatehouse store migrate` does), so services can open the database at once.
 * @throws Error with the server's output when it does not start.
 */
export async function startPostgresServer(
  options: {
    startTimeoutMs?: number;
    migrate?: boolean;
    /** Log every statement the server receives (`log_statement=all`) and keep the whole log (tests that check what reached it). */
    logStatements?: boolean;
    /**
     * Roles other than the superuser `gatehouse` must give their password over TCP (scram-sha-256
     * in pg_hba.conf), for tests that check a wrong password is refused. Default: trust for all.
     */
    requirePasswords?: boolean;
    /**
     * More addresses to listen on besides 127.0.0.1, e.g. a bridge address Pods of a local cluster reach
     * the host at ("10.244.0.1"). Default none.
     */
    alsoListenOn?: string[];
    /**
     * Networks (CIDR) whose clients log in without a password over TCP, e.g. a local cluster's Pod range
     * ("10.244.0.0/24"): for a throwaway test server only. Default none (loopback only).
     */
    trustNetworks?: string[];
  } = {},
): Promise<PostgresServer> {
  const bin = postgresBinDir();
  const dataDir = mkdtempSync(join(tmpdir(), "gatehouse-pg-"));
  const asRoot = userInfo().uid === 0;
  let uid = 0;
  let gid = 0;
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]).catch(() => {
      throw new Error("running as root needs the postgres user (Debian's postgresql package creates it)");
    });
    uid = Number(stdout.trim());
    gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
    chownSync(dataDir, uid, gid);
  }
  const as = (command: string, args: string[]): [string, string[]] =>
    asRoot
      ? ["setpriv", [`--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", command, ...args]]
      : [command, args];
  const pgdata = join(dataDir, "data");
  await run(
    ...as(join(bin, "initdb"), ["-D", pgdata, "-U", "gatehouse", "--auth=trust", "-E", "UTF8", "--no-sync"]),
    {
      env: { ...process.env, LC_ALL: "C" },
    },
  );
  if (options.requirePasswords) {
    // Overwrites initdb's file in place, so it keeps its owner (the postgres user when run as root).
    writeFileSync(
      join(pgdata, "pg_hba.conf"),
      [
        "local all all trust",
        "host all gatehouse 127.0.0.1/32 trust",
        "host all all 127.0.0.1/32 scram-sha-256",
        "",
      ].join("\n"),
    );
  }
  if (options.trustNetworks?.length) {
    const hba = join(pgdata, "pg_hba.conf");
    appendFileSync(hba, options.trustNetworks.map((cidr) => `host all all ${cidr} trust\n`).join(""));
  }
  const port = await freePort();
  const [cmd, args] = as(join(bin, "postgres"), [
    "-D",
    pgdata,
    "-h",
    ["127.0.0.1", ...(options.alsoListenOn ?? [])].join(","),
    "-p",
    String(port),
    "-k",
    dataDir,
    "-c",
    "max_connections=200",
    ...(options.logStatements ? ["-c", "log_statement=all"] : []),
  ]);
  const child: ChildProcess = spawn(cmd, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, LC_ALL: "C" },
  });
  let output = "";
  const keep = options.logStatements ? 64 * 1024 * 1024 : 4000;
  child.stdout?.on("data", (d) => {
    output = (output + String(d)).slice(-keep);
  });
  child.stderr?.on("data", (d) => {
    output = (output + String(d)).slice(-keep);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const url = `postgres://gatehouse@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`postgres exited with code ${child.exitCode}: ${output}`);
    }
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query("CREATE DATABASE gatehouse");
      await client.end();
      break;
    } catch {
      await client.end().catch(() => {});
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`postgres did not accept connections on 127.0.0.1:${port} in time: ${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const gatehouseUrl = `postgres://gatehouse@127.0.0.1:${port}/gatehouse`;
  if (options.migrate) {
    const client = new pg.Client({ connectionString: gatehouseUrl });
    try {
      await client.connect();
      await migratePostgres(client, gatehouseUrl);
    } catch (error) {
      await stop();
      throw error;
    } finally {
      await client.end().catch(() => {});
    }
  }
  return { url: gatehouseUrl, port, stop, log: () => output };
}
