/**
 * Every Gatehouse service in one process, gRPC on loopback — what `gatehouse dev` runs and what
 * the end-to-end tests start. Data lives under `dataDir` (events.sqlite, the dev MCP servers' state).
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type AgentConfig, agentConfigFromEnv } from "@gatehouse/agent-core/providers";
import { readModelUrlFor, startApprovalService } from "@gatehouse/approval";
import { type EventStore, openEventStore } from "@gatehouse/event-store";
import { loadRemotesFile, type RemoteRule, startGitGatekeeper } from "@gatehouse/gatekeeper-git";
import { createRegistry, type RegistryConfig, startMcpGatekeeper } from "@gatehouse/gatekeeper-mcp";
import type { RegistryConfig as PostgresRegistryConfig } from "@gatehouse/gatekeeper-postgres";
import { type DevToken, loadDevTokensFile, type OidcOptions, startGateway } from "@gatehouse/gateway";
import { type KernelOptions, type RunningKernel, startKernel } from "@gatehouse/kernel";
import { connectNatsNoticeBus, InProcessNoticeBus, type NoticeBus } from "@gatehouse/live-notices";
import { DEFAULT_CAPS, startSandboxRunner } from "@gatehouse/sandbox-runner";
import { freePort } from "@gatehouse/service-kit";
import { startTemporalDevServer } from "@gatehouse/temporal-dev";
import {
  type AgentChats,
  parseApplyMax,
  startAgent,
  startAgentChatsServer,
  startLifecycleWorker,
} from "@gatehouse/worker";
import pino, { type Logger } from "pino";
import { stringify } from "yaml";

export interface DevStackOptions {
  /** Directory for all data; created when missing. */
  dataDir: string;
  /**
   * Event-store URL (`sqlite:<path>`, `postgres://…`, `kurrentdb://…`); default the embedded store
   * `sqlite:<dataDir>/events.sqlite`. A PostgreSQL database must be migrated first (`gatehouse store migrate`).
   */
  eventStoreUrl?: string;
  /** MCP server registry; default: `devRegistry(dataDir)`. */
  registry?: RegistryConfig;
  /**
   * Fixed ports (0 or absent = a free port). `temporal` is the dev server's frontend port; `gateway`
   * serves the web app; `agent` is the AgentChats gRPC service the gateway's chat routes call.
   */
  ports?: Partial<
    Record<
      "kernel" | "approval" | "mcp" | "git" | "postgres" | "runner" | "temporal" | "gateway" | "agent",
      number
    >
  >;
  /**
   * NATS server(s) for live notices ("nats://host:port"). Absent: an in-process bus (no NATS needed).
   */
  natsUrl?: string;
  /** OIDC sign-in for the gateway besides the dev tokens (absent: dev tokens only). */
  oidc?: OidcOptions;
  /**
   * A running Temporal server ("host:port"). Absent: a `temporal server start-dev` is started,
   * persisting to `<dataDir>/temporal.db`, its pid in `<dataDir>/temporal.pid`; it dies with this
   * process, and a leftover one (pid file, same db) is stopped before the next start.
   */
  temporalAddress?: string;
  /** Pending-action time-to-live, ms (default 7 days). */
  actionTtlMs?: number;
  /** Directories whose git repositories `git+file://` resources may name (default `<dataDir>/repos`). */
  gitAllowedRoots?: string[];
  /**
   * Remote git prefixes with credentials (default: from the YAML file named by
   * GATEKEEPER_GIT_REMOTES when set, else none). Mirrors live in `<dataDir>/git-cache`.
   */
  gitRemotes?: RemoteRule[];
  /**
   * The administrator's registry of PostgreSQL servers (`loadRegistryFile` of @gatehouse/gatekeeper-postgres,
   * what `--postgres-registry <file>` names). Given: the PostgreSQL gatekeeper runs in-process and
   * serves `postgres://<registered server>/<database>` resources. Absent: it does not run, and such a
   * resource is refused saying to pass `--postgres-registry`.
   */
  postgresRegistry?: PostgresRegistryConfig;
  /**
   * Longest wait for one apply by gatekeeper kind, ms, while the gatekeeper reports it running
   * (default: from GATEKEEPER_APPLY_MAX, e.g. "mcp=30m", when set; else 15 minutes each).
   */
  applyMaxMs?: Record<string, number>;
  /**
   * "auto" uses gVisor when runsc is installed and refuses to start without it; "none" runs without gVisor
   * (passed to the runner as its --insecure-no-gvisor opt-in; every result then carries a warning).
   */
  sandbox?: "auto" | "gvisor" | "none";
  /**
   * The sandbox runner's frame cap (its SANDBOX_MAX_FRAME_BYTES), bytes; the git and PostgreSQL
   * gatekeepers size their replies from the same value (default: the runner's, 1 MiB).
   */
  maxFrameBytes?: number;
  /**
   * The secret the kernel signs caller tokens with and the approval service checks them with (at
   * least 32 bytes; default: random per start). Given by benchmarks that call ApprovalQueue directly.
   */
  callerTokenSecret?: string;
  /**
   * The built-in agent's configuration (default: from the AGENT_* variables, `agentConfigFromEnv`).
   * Naming a model: the agent worker runs in-process; none: the agent is off and chat calls say
   * which variables to set.
   */
  agent?: AgentConfig;
  /** The agent's task queue (default gatehouse-agent). */
  agentTaskQueue?: string;
  /**
   * Review notifications (@gatehouse/notify `loadNotifyConfig`: SMTP, from address, webhook registry,
   * the web app's public URL for the links). Given: the kernel emails and posts once per turn whose
   * writes wait for review (docs/notifications.md); absent: nothing is sent.
   */
  notify?: KernelOptions["notify"];
  logger?: Logger;
}

export interface DevStack {
  addresses: {
    kernel: string;
    approval: string;
    mcp: string;
    git: string;
    /** The PostgreSQL gatekeeper, when `postgresRegistry` was given. */
    postgres?: string;
    runner: string;
    temporal: string;
    /** The built-in agent's AgentChats gRPC service (served whether the agent is on or off). */
    agent: string;
    /** The gateway's URL, "http://127.0.0.1:<port>" (web app at `/`, API at `/api`). */
    gateway: string;
  };
  /** The dev tokens the gateway accepts (from `<dataDir>/dev-tokens.yaml`, made on first start). */
  devTokens: DevToken[];
  store: EventStore;
  /** The in-process kernel's metrics (e.g. open binding watches). */
  kernelMetrics: RunningKernel["metrics"];
  /** The sandbox mode actually in use ("gvisor" or "none"). */
  sandboxMode: string;
  /** The built-in agent's chat operations (`agent.enabled` false: each call throws AgentOff). */
  agent: AgentChats;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

/**
 * The registry `gatehouse dev` uses when none is given: two real MCP servers from npm, vetted,
 * with their state under the data dir — `memory` (knowledge graph, file `memory.jsonl`) and
 * `files` (file system server limited to `<dataDir>/files`).
 */
export function devRegistry(dataDir: string): RegistryConfig {
  const dir = resolve(dataDir);
  mkdirSync(join(dir, "files"), { recursive: true });
  return createRegistry({
    servers: {
      memory: {
        command: process.execPath,
        args: [require.resolve("@modelcontextprotocol/server-memory/dist/index.js")],
        env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
        vetted: true,
      },
      files: {
        command: process.execPath,
        args: [require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js"), join(dir, "files")],
        vetted: true,
      },
    },
  });
}

/**
 * What the kernel tells a person whose resource needs a gatekeeper this stack does not run (the
 * PostgreSQL gatekeeper runs only with a registry).
 */
export const DEV_UNCONFIGURED_HINTS: Readonly<Record<string, string>> = {
  postgres:
    "pass --postgres-registry <file> to gatehouse dev, naming the YAML registry of PostgreSQL servers (format: services/gatekeeper-postgres/src/registry.ts), then connect the resource again",
};

/**
 * Starts store, approval, the gatekeepers (MCP, git, and PostgreSQL when `postgresRegistry` is
 * given), sandbox runner and kernel; resolves when all listen.
 */
export async function startDevStack(options: DevStackOptions): Promise<DevStack> {
  const applyMaxMs = options.applyMaxMs ?? applyMaxFromEnv(); // before anything starts
  const agentConfig = options.agent ?? agentConfigFromEnv(process.env); // AgentConfigError names the variable
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const logger = options.logger ?? pino({ level: "warn" });
  const host = "127.0.0.1";
  const secret = options.callerTokenSecret ?? randomBytes(32).toString("base64url");
  // StoreUnavailable / StoreSchemaMismatch reach the caller, naming the URL (password redacted) and the fix.
  const storeUrl = options.eventStoreUrl ?? `sqlite:${join(dataDir, "events.sqlite")}`;
  const store = await openEventStore(storeUrl);
  const closers: Array<() => Promise<void>> = [];
  try {
    const notices: NoticeBus = options.natsUrl
      ? await connectNatsNoticeBus({
          servers: options.natsUrl,
          name: "gatehouse-dev",
          reconnectTimeWaitMs: 250,
        })
      : new InProcessNoticeBus();
    closers.push(() => notices.close());
    let temporalAddress = options.temporalAddress;
    if (!temporalAddress) {
      const server = await startTemporalDevServer({
        dbFile: join(dataDir, "temporal.db"),
        port: options.ports?.temporal ?? 0,
        // A server left running by a dev stack that was killed is stopped and replaced.
        pidFile: join(dataDir, "temporal.pid"),
      });
      closers.push(() => server.close());
      if (server.stoppedLeftover) {
        logger.warn(
          { event: "leftover_stopped", pid: server.stoppedLeftover.pid },
          `stopped a Temporal dev server left running on this data dir (pid ${server.stoppedLeftover.pid})`,
        );
      }
      temporalAddress = server.address;
    }
    const temporal = { address: temporalAddress };
    const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_CAPS.maxFrameBytes;
    const runner = await startSandboxRunner({
      host,
      maxFrameBytes,
      port: options.ports?.runner ?? 0,
      mode: options.sandbox ?? "auto",
      // `--sandbox none` is the operator's explicit choice to run without gVisor; the runner requires it
      // to be stated (it refuses "none", and "auto" without runsc, otherwise).
      insecureNoGvisor: options.sandbox === "none",
      logger,
    });
    closers.push(() => runner.close());
    // The approval service needs the gatekeeper's address and vice versa: bind the gatekeeper first
    // with a fixed approval port chosen now.
    const approvalPort = options.ports?.approval ?? (await freePort());
    const mcp = await startMcpGatekeeper({
      registry: options.registry ?? devRegistry(dataDir),
      approvalAddress: `${host}:${approvalPort}`,
      host,
      port: options.ports?.mcp ?? 0,
      logger,
    });
    closers.push(() => mcp.close());
    const gitRoots = options.gitAllowedRoots ?? [join(dataDir, "repos")];
    for (const root of gitRoots) mkdirSync(root, { recursive: true });
    const git = await startGitGatekeeper({
      allowedRoots: gitRoots,
      remotes:
        options.gitRemotes ??
        (process.env.GATEKEEPER_GIT_REMOTES ? loadRemotesFile(process.env.GATEKEEPER_GIT_REMOTES) : []),
      cacheDir: join(resolve(dataDir), "git-cache"),
      approvalAddress: `${host}:${approvalPort}`,
      host,
      port: options.ports?.git ?? 0,
      logger,
      limits: { maxFrameBytes },
    });
    closers.push(() => git.close());
    let postgresAddress: string | undefined;
    if (options.postgresRegistry) {
      // Loaded only when asked for: it brings PostgreSQL's parser (WebAssembly) and the pg driver.
      const { startPostgresGatekeeper } = await import("@gatehouse/gatekeeper-postgres");
      const postgres = await startPostgresGatekeeper({
        registry: options.postgresRegistry,
        approvalAddress: `${host}:${approvalPort}`,
        host,
        port: options.ports?.postgres ?? 0,
        logger,
        limits: { maxFrameBytes },
      });
      closers.push(() => postgres.close());
      postgresAddress = `${host}:${postgres.port}`;
    }
    const gatekeepers: Record<string, string> = {
      mcp: `${host}:${mcp.port}`,
      git: `${host}:${git.port}`,
      ...(postgresAddress ? { postgres: postgresAddress } : {}),
    };
    const worker = await startLifecycleWorker({
      store,
      temporal,
      gatekeepers,
      applyMaxMs,
      logger,
    });
    closers.push(() => worker.close());
    const approval = await startApprovalService({
      store,
      callerTokenSecret: secret,
      temporal,
      gatekeepers,
      ...(options.actionTtlMs ? { actionTtlMs: options.actionTtlMs } : {}),
      ...withReadModel(readModelUrlFor(storeUrl, dataDir)),
      host,
      port: approvalPort,
      logger,
      notices,
    });
    closers.push(() => approval.close());
    const kernel = await startKernel({
      store,
      callerTokenSecret: secret,
      gatekeepers,
      unconfiguredHints: DEV_UNCONFIGURED_HINTS,
      sandboxRunnerAddress: `${host}:${runner.port}`,
      temporal,
      host,
      port: options.ports?.kernel ?? 0,
      logger,
      ...(options.notify ? { notify: options.notify } : {}),
    });
    closers.push(() => kernel.close());
    const agent = await startAgent({
      store,
      temporal,
      kernelAddress: `${host}:${kernel.port}`,
      config: agentConfig,
      ...(options.agentTaskQueue ? { taskQueue: options.agentTaskQueue } : {}),
      logger,
      // The model's text as it streams, on the same bus as the notices (the gateway forwards it).
      deltas: (delta) => notices.publishChatDelta(delta),
    });
    closers.push(() => agent.close());
    const agentGrpc = await startAgentChatsServer({
      chats: agent.chats,
      host,
      port: options.ports?.agent ?? 0,
      logger,
    });
    closers.push(() => agentGrpc.close());
    const devTokens = devTokensOf(dataDir);
    const gateway = await startGateway({
      approvalAddress: `${host}:${approvalPort}`,
      kernelAddress: `${host}:${kernel.port}`,
      agentAddress: agentGrpc.address,
      notices,
      devTokens,
      ...(options.oidc ? { oidc: options.oidc } : {}),
      webDist: WEB_DIST,
      host,
      port: options.ports?.gateway ?? 0,
      logger,
    });
    closers.push(() => gateway.close());
    const addresses = {
      kernel: `${host}:${kernel.port}`,
      approval: `${host}:${approval.port}`,
      mcp: `${host}:${mcp.port}`,
      git: `${host}:${git.port}`,
      ...(postgresAddress ? { postgres: postgresAddress } : {}),
      runner: `${host}:${runner.port}`,
      temporal: temporalAddress,
      agent: agentGrpc.address,
      gateway: gateway.url,
    };
    return {
      addresses,
      devTokens,
      store,
      kernelMetrics: kernel.metrics,
      sandboxMode: runner.mode,
      agent: agent.chats,
      async close() {
        for (const close of closers.reverse()) await close().catch(() => {});
        await store.close();
      },
    };
  } catch (err) {
    for (const close of closers.reverse()) await close().catch(() => {});
    await store.close();
    throw err;
  }
}

/** The built web app (`npm run build` writes it); the gateway explains how to build it when missing. */
const WEB_DIST = fileURLToPath(new URL("../../../web/dist", import.meta.url));

/**
 * The dev tokens in `<dataDir>/dev-tokens.yaml`, creating the file (mode 0600) with three random
 * tokens — `dev-approver` (approver), `dev-auditor` (auditor), `dev-admin` (admin) — when missing.
 * Edit the file to add people; it is the gateway's GATEWAY_DEV_TOKENS_FILE format.
 * @throws Error naming the file and field when an existing file is invalid.
 */
export function devTokensOf(dataDir: string): DevToken[] {
  const file = join(dataDir, "dev-tokens.yaml");
  if (existsSync(file)) return loadDevTokensFile(file);
  const make = (subject: string, role: DevToken["roles"][number]): DevToken => ({
    token: `gh_dev_${randomBytes(18).toString("base64url")}`,
    subject,
    name: subject,
    roles: [role],
  });
  const tokens = [
    make("dev-approver", "approver"),
    make("dev-auditor", "auditor"),
    make("dev-admin", "admin"),
  ];
  writeFileSync(file, stringify({ tokens }), { mode: 0o600 });
  return tokens;
}

/** Writes `<dataDir>/dev.json` (addresses and pid) so CLI commands in other shells find the services. */
export function writeDevFile(dataDir: string, addresses: DevStack["addresses"]): void {
  writeFileSync(
    join(dataDir, "dev.json"),
    `${JSON.stringify({ ...addresses, pid: process.pid }, null, 2)}\n`,
  );
}

/** Removes `<dataDir>/dev.json` if this process wrote it. */
export function removeDevFile(dataDir: string): void {
  const file = join(dataDir, "dev.json");
  try {
    if (JSON.parse(readFileSync(file, "utf8")).pid === process.pid) rmSync(file);
  } catch {
    // already gone or not ours
  }
}

/**
 * The pid of another live `gatehouse dev` using `dataDir`, or undefined. Two dev stacks on one
 * data dir would share one event store and one set of MCP servers, so `dev` refuses to start.
 */
export function otherDevUsing(dataDir: string): number | undefined {
  try {
    const pid = JSON.parse(readFileSync(join(dataDir, "dev.json"), "utf8")).pid;
    if (typeof pid !== "number" || pid === process.pid) return undefined;
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** GATEKEEPER_APPLY_MAX as the worker reads it. @throws Error naming the variable and the wrong part. */
function applyMaxFromEnv(): Record<string, number> {
  try {
    return parseApplyMax(process.env.GATEKEEPER_APPLY_MAX ?? "");
  } catch (err) {
    throw new Error(`GATEKEEPER_APPLY_MAX: ${(err as Error).message}`);
  }
}

/** The approval option naming the read model's home; none = in memory. */
function withReadModel(url: string | undefined): { readModelUrl?: string } {
  return url ? { readModelUrl: url } : {};
}
