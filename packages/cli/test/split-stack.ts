/**
 * A split deployment for crash tests: the approval service, the lifecycle worker, gatekeeper-mcp, the
 * sandbox runner and the kernel each run as their own process from their `main.ts`, configured only by
 * environment variables and sharing one SQLite event store file, against a `temporal server start-dev`.
 * Any service can be killed (SIGKILL, a crash) and started again with the same configuration and port.
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

const ROOT = resolve(import.meta.dirname, "../../..");

/** The services of a split stack. */
export type SplitService = "approval" | "worker" | "gatekeeper-mcp" | "sandbox-runner" | "kernel";

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
  /** Decisions client (64 MiB receive limit, so a log of thousands of actions comes back whole). */
  decisions: DecisionsClient;
  /** SIGKILLs the service's process and resolves once it exited (a crash: no graceful shutdown). */
  kill(name: SplitService): Promise<void>;
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

/**
 * Starts Temporal and the five services; `servers` is gatekeeper-mcp's registry (server name → entry).
 * Resolves once every service listens (generous deadline: six processes start at once on 2 cores).
 * @throws Error naming the service that exited or did not listen in time, with its output.
 */
export async function startSplitStack(
  servers: Record<string, RegistryServer>,
  dir?: string,
): Promise<SplitStack> {
  const base = dir ?? mkdtempSync(join(tmpdir(), "gatehouse-split-"));
  const registry = join(base, "registry.json"); // JSON is YAML
  writeFileSync(registry, JSON.stringify({ servers }));
  const temporal: TemporalDevServer = await startTemporalDevServer();
  // Every port chosen free, the ops (metrics) ports too: their defaults would collide with any other stack.
  const [kernel, approval, mcp, runner, workerMetrics, ...ops] = await Promise.all(
    [1, 2, 3, 4, 5, 6, 7, 8, 9].map(() => freePort()),
  );
  const [approvalOps, mcpOps, runnerOps, kernelOps] = ops.map((p) => `127.0.0.1:${p}`);
  const gatekeepers = `mcp=127.0.0.1:${mcp}`;
  const common = {
    GATEHOUSE_DATA_DIR: join(base, "data"),
    GATEHOUSE_CALLER_TOKEN_SECRET: randomBytes(32).toString("hex"),
    TEMPORAL_ADDRESS: temporal.address,
  };
  const services: Record<SplitService, Running> = {
    approval: {
      entry: "services/approval/src/main.ts",
      env: {
        ...common,
        APPROVAL_ADDR: `127.0.0.1:${approval}`,
        METRICS_ADDR: approvalOps as string,
        GATEKEEPER_ADDRESSES: gatekeepers,
      },
      port: approval as number,
      output: "",
    },
    worker: {
      entry: "services/worker/src/main.ts",
      env: {
        ...common,
        GATEKEEPER_ADDRESSES: gatekeepers,
        WORKER_METRICS_ADDR: `127.0.0.1:${workerMetrics}`,
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
  const start = async (name: SplitService) => {
    const s = services[name];
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
    const child = services[name].child;
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
    kill: (name) => stop(name, "SIGKILL"),
    start,
    log: (name) => services[name].output,
    async close() {
      kernelClient.close();
      decisions.close();
      await close();
    },
  };
}
