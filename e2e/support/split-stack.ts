/**
 * A split deployment for crash tests: the approval service, the lifecycle worker, gatekeeper-mcp, the
 * sandbox runner, the kernel (and gatekeeper-postgres with the `postgresRegistry` option) each run as their own process from their `main.ts`, configured only by
 * environment variables and sharing one event store (a SQLite file by default, or the `storeUrl` option,
 * e.g. a PostgreSQL database), against a `temporal server start-dev`. Options add more approval
 * processes and gateway processes (each gateway talks to its own approval process; live notices over
 * the `natsUrl` option's NATS). Any service can be killed (SIGKILL, a crash) or stopped (SIGTERM, a pod
 * replaced in a rollout) and started again with the same configuration and port.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DecisionsClient, KernelClient } from "@gatehouse/proto";
import { freePort, waitForPort } from "@gatehouse/service-kit";
import { startTemporalDevServer, type TemporalDevServer } from "@gatehouse/temporal-dev";
import { credentials } from "@grpc/grpc-js";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * The services of a split stack. The first approval process is "approval", further ones (option
 * `approvals`) "approval-2", "approval-3", …; gateways (option `gateways`) are "gateway", "gateway-2", ….
 */
export type SplitService =
  | "approval"
  | "worker"
  | "gatekeeper-mcp"
  | "gatekeeper-postgres"
  | "sandbox-runner"
  | "kernel"
  | `approval-${number}`
  | "gateway"
  | `gateway-${number}`;

/** One static dev token of the gateways (GATEWAY_DEV_TOKENS_FILE's entry). */
export interface SplitDevToken {
  /** At least 16 characters. */
  token: string;
  subject: string;
  roles: Array<"approver" | "auditor" | "admin">;
}

/** Options of {@link startSplitStack}. */
export interface SplitStackOptions {
  /** Temp directory to use instead of a fresh one (removed by `close()` either way). */
  dir?: string;
  /** EVENT_STORE_URL of the kernel, the approval processes and the worker (default: SQLite in `<dir>/data`). */
  storeUrl?: string;
  /** NATS_URL of the approval processes (they publish live notices), the worker (the agent's streamed text) and the gateways; needed for gateways. */
  natsUrl?: string;
  /** Number of approval processes on the one store (default 1). */
  approvals?: number;
  /** Number of gateway processes (default 0); gateway i talks to approval process i (mod `approvals`). */
  gateways?: number;
  /** The gateways' dev tokens (needed when `gateways` > 0). */
  devTokens?: SplitDevToken[];
  /** Extra environment of every gateway process (e.g. GATEWAY_DRAIN_SECONDS). */
  gatewayEnv?: Record<string, string>;
  /**
   * Path of a YAML registry of PostgreSQL servers (services/gatekeeper-postgres/src/registry.ts): runs
   * gatekeeper-postgres as its own process (GATEKEEPER_POSTGRES_REGISTRY) and adds it to every
   * GATEKEEPER_ADDRESSES as `postgres=`. Passwords its roles name by `passwordEnv` are read from
   * `postgresEnv`. Absent: no gatekeeper-postgres process.
   */
  postgresRegistry?: string;
  /** Extra environment of the gatekeeper-postgres process (e.g. the registry's passwordEnv variables). */
  postgresEnv?: Record<string, string>;
}

/** One registered MCP server (gatekeeper-mcp's registry entry; the YAML registry's shape). */
export interface RegistryServer {
  command: string;
  args: string[];
  env?: Record<string, string>;
  vetted?: boolean;
}

export interface SplitStack {
  /** Temp directory holding the event store (`data/`), the registry and whatever the test puts there. */
  dir: string;
  kernel: KernelClient;
  /** Decisions client of the first approval process (64 MiB receive limit, so a log of thousands of actions comes back whole). */
  decisions: DecisionsClient;
  /** "host:port" of each approval process, in order ("approval", "approval-2", …). */
  approvalAddresses: string[];
  /** Base URL (`http://127.0.0.1:<port>`) of each gateway, in order ("gateway", "gateway-2", …). */
  gatewayUrls: string[];
  /** Base URL of each gateway's ops endpoint (`/healthz`, `/metrics`: METRICS_ADDR), in the same order. */
  gatewayOpsUrls: string[];
  /** SIGKILLs the service's process and resolves once it exited (a crash: no graceful shutdown). */
  kill(name: SplitService): Promise<void>;
  /**
   * SIGTERMs the service's process (as Kubernetes does to a replaced pod) and resolves once it exited
   * (a gateway with GATEWAY_DRAIN_SECONDS drains first).
   */
  stop(name: SplitService): Promise<void>;
  /** Starts the service again with its configuration and port; resolves once it listens. */
  start(name: SplitService): Promise<void>;
  /** The service's last output (for failure messages). */
  log(name: SplitService): string;
  /** Stops every process (SIGTERM), the Temporal server, and removes `dir`. */
  close(): Promise<void>;
}

interface Running {
  entry: string;
  env: Record<string, string>;
  /** Port that listens once the process is ready. */
  port: number;
  child?: ChildProcess;
  output: string;
}

/** "approval", "approval-2", … / "gateway", "gateway-2", …: the name of the i-th (0-based) process. */
function nth<P extends "approval" | "gateway">(prefix: P, i: number): P | `${P}-${number}` {
  return i === 0 ? prefix : `${prefix}-${i + 1}`;
}

/**
 * Starts Temporal and the services; `servers` is gatekeeper-mcp's registry (server name → entry).
 * Resolves once every service listens (generous deadline: six or more processes start at once on 2 cores).
 * `options` may be a directory (the older signature) or {@link SplitStackOptions}.
 * @throws Error naming the service that exited or did not listen in time, with its output.
 */
export async function startSplitStack(
  servers: Record<string, RegistryServer>,
  options: string | SplitStackOptions = {},
): Promise<SplitStack> {
  const opts: SplitStackOptions = typeof options === "string" ? { dir: options } : options;
  const approvalCount = opts.approvals ?? 1;
  const gatewayCount = opts.gateways ?? 0;
  if (approvalCount < 1) throw new Error("approvals must be at least 1");
  if (gatewayCount > 0 && (!opts.natsUrl || !opts.devTokens?.length))
    throw new Error("gateways need the natsUrl and devTokens options");
  const base = opts.dir ?? mkdtempSync(join(tmpdir(), "gatehouse-split-"));
  const registry = join(base, "registry.json"); // JSON is YAML
  writeFileSync(registry, JSON.stringify({ servers }));
  const temporal: TemporalDevServer = await startTemporalDevServer();
  // Every port chosen free, the ops (metrics) ports too: their defaults would collide with any other stack.
  const postgresCount = opts.postgresRegistry ? 1 : 0;
  const ports = await Promise.all(
    Array.from({ length: 8 + 2 * approvalCount + 2 * gatewayCount + 2 * postgresCount }, () => freePort()),
  );
  const take = (n: number) => ports.splice(0, n);
  const [kernel, mcp, runner, workerMetrics, workerGrpc, ...ops] = take(8);
  const [mcpOps, runnerOps, kernelOps] = ops.map((p) => `127.0.0.1:${p}`);
  const approvalPorts = take(approvalCount);
  const approvalOpsPorts = take(approvalCount);
  const gatewayPorts = take(gatewayCount);
  const gatewayOpsPorts = take(gatewayCount);
  const [postgres, postgresOps] = take(2 * postgresCount);
  const approval = approvalPorts[0] as number;
  const gatekeepers = `mcp=127.0.0.1:${mcp}${postgres ? `,postgres=127.0.0.1:${postgres}` : ""}`;
  const common = {
    GATEHOUSE_DATA_DIR: join(base, "data"),
    ...(opts.storeUrl ? { EVENT_STORE_URL: opts.storeUrl } : {}),
    GATEHOUSE_CALLER_TOKEN_SECRET: randomBytes(32).toString("hex"),
    TEMPORAL_ADDRESS: temporal.address,
  };
  const devTokensFile = join(base, "dev-tokens.json"); // JSON is YAML
  if (gatewayCount > 0) writeFileSync(devTokensFile, JSON.stringify({ tokens: opts.devTokens }));
  const approvals = Object.fromEntries(
    approvalPorts.map((port, i) => [
      nth("approval", i),
      {
        entry: "services/approval/src/main.ts",
        env: {
          ...common,
          APPROVAL_ADDR: `127.0.0.1:${port}`,
          METRICS_ADDR: `127.0.0.1:${approvalOpsPorts[i]}`,
          GATEKEEPER_ADDRESSES: gatekeepers,
          ...(opts.natsUrl ? { NATS_URL: opts.natsUrl } : {}),
        },
        port,
        output: "",
      } satisfies Running,
    ]),
  );
  const gateways = Object.fromEntries(
    gatewayPorts.map((port, i) => [
      nth("gateway", i),
      {
        entry: "services/gateway/src/main.ts",
        env: {
          GATEWAY_ADDR: `127.0.0.1:${port}`,
          APPROVAL_ADDRESS: `127.0.0.1:${approvalPorts[i % approvalCount]}`,
          KERNEL_ADDRESS: `127.0.0.1:${kernel}`,
          // The worker's AgentChats service (the built-in agent's chats; off unless the test gives AGENT_*).
          AGENT_ADDRESS: `127.0.0.1:${workerGrpc}`,
          NATS_URL: opts.natsUrl as string,
          GATEWAY_DEV_TOKENS_FILE: devTokensFile,
          METRICS_ADDR: `127.0.0.1:${gatewayOpsPorts[i]}`,
          ...opts.gatewayEnv,
        },
        port,
        output: "",
      } satisfies Running,
    ]),
  );
  const services: Partial<Record<SplitService, Running>> = {
    ...approvals,
    ...gateways,
    worker: {
      entry: "services/worker/src/main.ts",
      env: {
        ...common,
        GATEKEEPER_ADDRESSES: gatekeepers,
        WORKER_METRICS_ADDR: `127.0.0.1:${workerMetrics}`,
        WORKER_GRPC_ADDR: `127.0.0.1:${workerGrpc}`,
        // The agent's streamed text (when a test gives it a model) goes where the gateways listen.
        ...(opts.natsUrl ? { NATS_URL: opts.natsUrl } : {}),
      },
      port: workerMetrics as number,
      output: "",
    },
    "gatekeeper-mcp": {
      entry: "services/gatekeeper-mcp/src/main.ts",
      env: {
        GATEKEEPER_MCP_ADDR: `127.0.0.1:${mcp}`,
        APPROVAL_ADDRESS: `127.0.0.1:${approval}`,
        GATEKEEPER_MCP_REGISTRY: registry,
        GATEKEEPER_MCP_METRICS_ADDR: mcpOps as string,
      },
      port: mcp as number,
      output: "",
    },
    ...(opts.postgresRegistry && postgres && postgresOps
      ? {
          "gatekeeper-postgres": {
            entry: "services/gatekeeper-postgres/src/main.ts",
            env: {
              ...opts.postgresEnv,
              GATEKEEPER_POSTGRES_ADDR: `127.0.0.1:${postgres}`,
              APPROVAL_ADDRESS: `127.0.0.1:${approval}`,
              GATEKEEPER_POSTGRES_REGISTRY: opts.postgresRegistry,
              GATEKEEPER_POSTGRES_METRICS_ADDR: `127.0.0.1:${postgresOps}`,
            },
            port: postgres,
            output: "",
          } satisfies Running,
        }
      : {}),
    "sandbox-runner": {
      entry: "sandbox-runner/src/main.ts",
      env: { SANDBOX_RUNNER_ADDR: `127.0.0.1:${runner}`, SANDBOX_RUNNER_METRICS_ADDR: runnerOps as string },
      port: runner as number,
      output: "",
    },
    kernel: {
      entry: "services/kernel/src/main.ts",
      env: {
        ...common,
        KERNEL_ADDR: `127.0.0.1:${kernel}`,
        KERNEL_METRICS_ADDR: kernelOps as string,
        GATEKEEPER_ADDRESSES: gatekeepers,
        SANDBOX_RUNNER_ADDRESS: `127.0.0.1:${runner}`,
      },
      port: kernel as number,
      output: "",
    },
  };

  const stopping = new WeakSet<ChildProcess>();
  const serviceOf = (name: SplitService): Running => {
    const s = services[name];
    if (!s) throw new Error(`this split stack has no ${name} process`);
    return s;
  };
  const start = async (name: SplitService) => {
    const s = serviceOf(name);
    s.output = "";
    const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", s.entry], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: "warn", ...s.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    s.child = child;
    const keep = (d: Buffer) => {
      s.output = (s.output + d.toString()).slice(-20_000);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    // A service that dies on its own (not by kill/close) says so with its output, for the failure report.
    child.once("exit", (code, signal) => {
      if (!stopping.has(child)) {
        process.stderr.write(
          `[split-stack] ${name} exited on its own (${code ?? signal}):\n${s.output.slice(-4000)}\n`,
        );
      }
    });
    await waitForPort(s.port, {
      name,
      timeoutMs: 180_000,
      stillRunning: () =>
        child.exitCode !== null || child.signalCode !== null
          ? `${name} exited with ${child.exitCode ?? child.signalCode}`
          : undefined,
    }).catch((err: Error) => {
      throw new Error(`${err.message}; its output:\n${s.output.slice(-3000)}`);
    });
  };
  const stop = async (name: SplitService, signal: NodeJS.Signals) => {
    const child = serviceOf(name).child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    stopping.add(child);
    child.kill(signal);
    await exited;
  };

  const all = Object.keys(services) as SplitService[];
  const close = async () => {
    await Promise.all(all.map((n) => stop(n, "SIGTERM")));
    await temporal.close();
    rmSync(base, { recursive: true, force: true });
  };
  try {
    await Promise.all(all.map(start));
  } catch (err) {
    await close();
    throw err;
  }
  const kernelClient = new KernelClient(`127.0.0.1:${kernel}`, credentials.createInsecure());
  const decisions = new DecisionsClient(`127.0.0.1:${approval}`, credentials.createInsecure(), {
    "grpc.max_receive_message_length": 64 << 20,
  });
  return {
    dir: base,
    kernel: kernelClient,
    decisions,
    approvalAddresses: approvalPorts.map((p) => `127.0.0.1:${p}`),
    gatewayUrls: gatewayPorts.map((p) => `http://127.0.0.1:${p}`),
    gatewayOpsUrls: gatewayOpsPorts.map((p) => `http://127.0.0.1:${p}`),
    kill: (name) => stop(name, "SIGKILL"),
    stop: (name) => stop(name, "SIGTERM"),
    start,
    log: (name) => serviceOf(name).output,
    async close() {
      kernelClient.close();
      decisions.close();
      await close();
    },
  };
}
