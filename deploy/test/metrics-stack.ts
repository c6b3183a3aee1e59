/**
 * Every service of the chart as its own process, started from its `main.ts` with the environment
 * variables the chart's Deployments set (each on loopback ports), against a real Temporal dev server and a
 * real nats-server — to scrape each one's real `/metrics`. The sandbox runner runs with
 * SANDBOX_MODE=none (no gVisor needed to export metrics). Children die with this process.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NatsServerProcess, startNatsServer } from "@gatehouse/live-notices/nats-server";
import { freePort, spawnTiedToParent, waitUntil } from "@gatehouse/service-kit";
import { startTemporalDevServer, type TemporalDevServer } from "@gatehouse/temporal-dev";
import { REPO } from "./cluster.ts";

/** One running service: its name (the chart's component) and its /metrics URL. */
export interface MetricsTarget {
  component: string;
  metricsUrl: string;
}

/** The running stack. */
export interface MetricsStack {
  targets: MetricsTarget[];
  /** Stops every service (SIGTERM, then SIGKILL after 10 s), Temporal and NATS; removes the data. */
  close(): Promise<void>;
}

interface Spec {
  component: string;
  entry: string;
  env: Record<string, string>;
  ops: number;
}

/**
 * Starts the services; resolves once each answers `GET /metrics` with 200 (generous deadline: eight
 * Node processes start at once on 2 cores).
 * @throws Error naming the service that exited or did not answer, with the end of its output.
 */
export async function startMetricsStack(): Promise<MetricsStack> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-metrics-"));
  const children: ChildProcess[] = [];
  let temporal: TemporalDevServer | undefined;
  let nats: NatsServerProcess | undefined;
  const close = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const kill = setTimeout(() => c.kill("SIGKILL"), 10_000);
            c.once("exit", () => {
              clearTimeout(kill);
              resolve();
            });
            c.kill("SIGTERM");
          }),
      ),
    );
    await temporal?.close();
    await nats?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    [temporal, nats] = await Promise.all([startTemporalDevServer(), startNatsServer()]);
    const p = await Promise.all(Array.from({ length: 16 }, () => freePort()));
    // Tracing on, towards a loopback port nobody listens on: the services then export their
    // dropped-span counter (what the dashboard and TraceSpansDropped read), and count real drops.
    const deadCollector = `http://127.0.0.1:${p[15]}`;
    const at = (i: number) => `127.0.0.1:${p[i]}`;
    const [kernel, approval, mcp, git, postgres, runner, gateway] = [0, 1, 2, 3, 4, 5, 6].map(at);
    const data = join(dir, "data");
    const repos = join(dir, "repos");
    mkdirSync(repos, { recursive: true });
    const mcpRegistry = join(dir, "mcp-registry.json"); // JSON is YAML
    writeFileSync(mcpRegistry, JSON.stringify({ servers: {} }));
    const pgRegistry = join(dir, "postgres-registry.json");
    writeFileSync(pgRegistry, JSON.stringify({ servers: {} }));
    const devTokens = join(dir, "dev-tokens.json");
    writeFileSync(
      devTokens,
      JSON.stringify({
        tokens: [{ token: randomBytes(16).toString("hex"), subject: "sre", roles: ["auditor"] }],
      }),
    );
    const store = { GATEHOUSE_DATA_DIR: data, TEMPORAL_ADDRESS: temporal.address };
    const secret = randomBytes(32).toString("hex");
    const gatekeepers = `mcp=${mcp},git=${git},postgres=${postgres}`;
    const ops = (i: number) => p[7 + i] as number;
    const specs: Spec[] = [
      {
        component: "kernel",
        entry: "services/kernel/src/main.ts",
        env: {
          ...store,
          KERNEL_ADDR: kernel as string,
          KERNEL_METRICS_ADDR: `127.0.0.1:${ops(0)}`,
          GATEHOUSE_CALLER_TOKEN_SECRET: secret,
          GATEKEEPER_ADDRESSES: gatekeepers,
          SANDBOX_RUNNER_ADDRESS: runner as string,
        },
        ops: ops(0),
      },
      {
        component: "approval",
        entry: "services/approval/src/main.ts",
        env: {
          ...store,
          APPROVAL_ADDR: approval as string,
          METRICS_ADDR: `127.0.0.1:${ops(1)}`,
          GATEHOUSE_CALLER_TOKEN_SECRET: secret,
          GATEKEEPER_ADDRESSES: gatekeepers,
          NATS_URL: nats.url,
        },
        ops: ops(1),
      },
      {
        component: "worker",
        entry: "services/worker/src/main.ts",
        env: { ...store, WORKER_METRICS_ADDR: `127.0.0.1:${ops(2)}`, GATEKEEPER_ADDRESSES: gatekeepers },
        ops: ops(2),
      },
      {
        component: "gateway",
        entry: "services/gateway/src/main.ts",
        env: {
          GATEWAY_ADDR: gateway as string,
          METRICS_ADDR: `127.0.0.1:${ops(3)}`,
          APPROVAL_ADDRESS: approval as string,
          KERNEL_ADDRESS: kernel as string,
          NATS_URL: nats.url,
          GATEWAY_DEV_TOKENS_FILE: devTokens,
        },
        ops: ops(3),
      },
      {
        component: "gatekeeper-mcp",
        entry: "services/gatekeeper-mcp/src/main.ts",
        env: {
          GATEKEEPER_MCP_ADDR: mcp as string,
          GATEKEEPER_MCP_METRICS_ADDR: `127.0.0.1:${ops(4)}`,
          APPROVAL_ADDRESS: approval as string,
          GATEKEEPER_MCP_REGISTRY: mcpRegistry,
        },
        ops: ops(4),
      },
      {
        component: "gatekeeper-git",
        entry: "services/gatekeeper-git/src/main.ts",
        env: {
          GATEKEEPER_GIT_ADDR: git as string,
          GATEKEEPER_GIT_METRICS_ADDR: `127.0.0.1:${ops(5)}`,
          APPROVAL_ADDRESS: approval as string,
          GATEKEEPER_GIT_ALLOWED_ROOTS: repos,
          GATEKEEPER_GIT_CACHE_DIR: join(dir, "git-cache"),
        },
        ops: ops(5),
      },
      {
        component: "gatekeeper-postgres",
        entry: "services/gatekeeper-postgres/src/main.ts",
        env: {
          GATEKEEPER_POSTGRES_ADDR: postgres as string,
          GATEKEEPER_POSTGRES_METRICS_ADDR: `127.0.0.1:${ops(6)}`,
          APPROVAL_ADDRESS: approval as string,
          GATEKEEPER_POSTGRES_REGISTRY: pgRegistry,
        },
        ops: ops(6),
      },
      {
        component: "sandbox-runner",
        entry: "sandbox-runner/src/main.ts",
        env: {
          SANDBOX_RUNNER_ADDR: runner as string,
          SANDBOX_RUNNER_METRICS_ADDR: `127.0.0.1:${ops(7)}`,
          SANDBOX_MODE: "none",
          SANDBOX_INSECURE_NO_GVISOR: "1",
          SANDBOX_WARM: "0",
          SANDBOX_DATA_DIR: join(dir, "sandbox"),
        },
        ops: ops(7),
      },
    ];
    await Promise.all(
      specs.map(async (s) => {
        let output = "";
        const child = spawnTiedToParent(
          process.execPath,
          ["--no-node-snapshot", "--import", "tsx", s.entry],
          {
            cwd: REPO,
            env: { ...process.env, LOG_LEVEL: "warn", OTEL_EXPORTER_OTLP_ENDPOINT: deadCollector, ...s.env },
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        children.push(child);
        const keep = (d: Buffer) => {
          output = (output + d.toString()).slice(-8000);
        };
        child.stdout?.on("data", keep);
        child.stderr?.on("data", keep);
        const url = `http://127.0.0.1:${s.ops}/metrics`;
        await waitUntil(
          `${s.component}'s /metrics`,
          async () => {
            if (child.exitCode !== null || child.signalCode !== null) {
              throw new Error(`${s.component} exited (${child.exitCode ?? child.signalCode}):\n${output}`);
            }
            return fetch(url, { signal: AbortSignal.timeout(2000) }).then(
              (r) => r.ok,
              () => false,
            );
          },
          { timeoutMs: 240_000, intervalMs: 250 },
        ).catch((err: Error) => {
          throw new Error(`${err.message}\n${s.component}'s output:\n${output.slice(-3000)}`);
        });
      }),
    );
    return {
      targets: specs.map((s) => ({
        component: s.component,
        metricsUrl: `http://127.0.0.1:${s.ops}/metrics`,
      })),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The metric families of a Prometheus text exposition, name → type, from its `# TYPE` lines (prom-client
 * writes one for every registered metric, samples or not).
 */
export function metricFamilies(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1] as string, m[2] as string);
  return out;
}

/** The series names a family exposes: a histogram's `_bucket`, `_sum`, `_count`; a summary's `_sum`, `_count` and itself; else itself. */
export function seriesNames(name: string, type: string): string[] {
  if (type === "histogram") return [`${name}_bucket`, `${name}_sum`, `${name}_count`];
  if (type === "summary") return [name, `${name}_sum`, `${name}_count`];
  return [name];
}
