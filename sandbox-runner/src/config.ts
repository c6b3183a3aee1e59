import { hostname } from "node:os";
import { hostPort, splitHostPort } from "@gatehouse/service-kit";
import { z } from "zod";
import { ConfigError } from "./errors.ts";
import { DEFAULT_COMMAND, type SandboxPodTemplate } from "./kubernetes/template.ts";

const address = hostPort("127.0.0.1:7004");

const flag = z
  .enum(["1", "0", "true", "false", ""])
  .default("")
  .transform((v) => v === "1" || v === "true");

const dns1123 = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const dns1123sub = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const labelValue = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const cpuQuantity = /^([0-9]+m|[0-9]+(\.[0-9]+)?)$/;

const schema = z.object({
  SANDBOX_RUNNER_ADDR: address.default("127.0.0.1:7004"),
  SANDBOX_RUNNER_METRICS_ADDR: address.default("127.0.0.1:9474"),
  SANDBOX_MODE: z.enum(["gvisor", "gvisor-pod", "kubernetes", "none", "auto"]).default("auto"),
  SANDBOX_MAX_CONCURRENT: z.coerce.number().int().min(1).max(1024).default(16),
  SANDBOX_MAX_WAITING: z.coerce.number().int().min(0).max(100_000).default(256),
  SANDBOX_ADMISSION_WAIT_MS: z.coerce.number().int().min(0).max(600_000).default(20_000),
  SANDBOX_INSECURE_NO_GVISOR: flag,
  SANDBOX_DATA_DIR: z.string().min(1).optional(),
  SANDBOX_WARM: z.coerce.number().int().min(0).max(64).default(2),
  SANDBOX_IDLE_MS: z.coerce.number().int().min(100).max(86_400_000).default(300_000),
  SANDBOX_MAX_SANDBOXES: z.coerce.number().int().min(1).max(1024).default(16),
  SANDBOX_MAX_FRAME_BYTES: z.coerce.number().int().min(1024).max(16_777_216).default(1_048_576),
  SANDBOX_MAX_CALLS: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  SANDBOX_MEMORY_MB: z.coerce.number().int().min(256).max(1_048_576).default(2_560),
  SANDBOX_PIDS_MAX: z.coerce.number().int().min(64).max(1_000_000).default(512),
  SANDBOX_K8S_NAMESPACE: z.string().regex(dns1123, "a namespace name (DNS-1123 label)").optional(),
  SANDBOX_K8S_IMAGE: z.string().min(1).optional(),
  SANDBOX_K8S_IMAGE_PULL_POLICY: z.enum(["Always", "IfNotPresent", "Never"]).default("IfNotPresent"),
  SANDBOX_K8S_IMAGE_PULL_SECRETS: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  SANDBOX_K8S_RUNTIME_CLASS: z.string().regex(dns1123sub, "a RuntimeClass name").default("gvisor"),
  SANDBOX_K8S_RUNNER_NAME: z
    .string()
    .regex(labelValue, "a label value: up to 63 letters, digits, '-', '_' or '.'")
    .optional(),
  SANDBOX_K8S_CPU_REQUEST: z
    .string()
    .regex(cpuQuantity, 'a cpu quantity such as "100m" or "1"')
    .default("100m"),
  SANDBOX_K8S_CPU_LIMIT: z.string().regex(cpuQuantity, 'a cpu quantity such as "500m" or "2"').default("1"),
  SANDBOX_K8S_MEMORY_REQUEST_MB: z.coerce.number().int().min(64).max(1_048_576).default(256),
  SANDBOX_K8S_EPHEMERAL_MB: z.coerce.number().int().min(16).max(1_048_576).default(256),
  SANDBOX_K8S_INPUT_SILENCE_MS: z.coerce.number().int().min(6_000).max(3_600_000).default(30_000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/** Validated process configuration of the runner (from environment variables). */
export interface RunnerConfig {
  /** gRPC listen address, host:port (SANDBOX_RUNNER_ADDR, default 127.0.0.1:7004). */
  host: string;
  port: number;
  /** HTTP address for /healthz and /metrics (SANDBOX_RUNNER_METRICS_ADDR, default 127.0.0.1:9474). */
  metricsHost: string;
  metricsPort: number;
  /**
   * SANDBOX_MODE: gvisor | gvisor-pod | none | auto (default auto). gvisor-pod: the runner runs under
   * gVisor itself (a Pod of RuntimeClass gvisor) and refuses to start when its kernel is not gVisor's.
   */
  mode: "gvisor" | "gvisor-pod" | "kubernetes" | "none" | "auto";
  /**
   * With SANDBOX_MODE=kubernetes, the sandbox pods' template: SANDBOX_K8S_NAMESPACE and SANDBOX_K8S_IMAGE
   * (required), SANDBOX_K8S_IMAGE_PULL_POLICY (IfNotPresent), SANDBOX_K8S_IMAGE_PULL_SECRETS (comma list),
   * SANDBOX_K8S_RUNTIME_CLASS (gvisor), SANDBOX_K8S_RUNNER_NAME (default the host name, which in a pod is
   * its name), SANDBOX_K8S_CPU_REQUEST (100m), SANDBOX_K8S_CPU_LIMIT (1), SANDBOX_K8S_MEMORY_REQUEST_MB
   * (256), SANDBOX_MEMORY_MB as the memory limit, SANDBOX_K8S_EPHEMERAL_MB (256),
   * SANDBOX_K8S_INPUT_SILENCE_MS (30000). Null in the other modes.
   */
  kubernetes: SandboxPodTemplate | null;
  /**
   * SANDBOX_INSECURE_NO_GVISOR=1|true (default false), or the `--insecure-no-gvisor` flag of main.ts: consent
   * to run without gVisor (needed for SANDBOX_MODE=none, and for auto when runsc is absent).
   */
  insecureNoGvisor: boolean;
  /** SANDBOX_MAX_CONCURRENT: executions admitted at once, queued in their workspace's lane or running (default 16). */
  maxConcurrent: number;
  /** SANDBOX_MAX_WAITING: executions allowed to wait for admission; more are refused at once (default 256). */
  maxWaiting: number;
  /**
   * SANDBOX_ADMISSION_WAIT_MS: longest wait for admission, ms (default 20000, under the kernel's 30 s margin
   * past the wall time); then the execution is refused.
   */
  admissionWaitMs: number;
  /** SANDBOX_DATA_DIR: parent of the gVisor bundle template (default OS temp dir). */
  dataDir: string | undefined;
  /** SANDBOX_WARM: pre-started unassigned sandboxes (default 2). */
  warm: number;
  /** SANDBOX_IDLE_MS: a workspace's sandbox is reaped after this long without executions, ms (default 300000). */
  idleMs: number;
  /** SANDBOX_MAX_SANDBOXES: most sandboxes at once, all states (default 16). */
  maxSandboxes: number;
  /** SANDBOX_MAX_FRAME_BYTES: largest capnweb message either way, bytes (default 1048576). */
  maxFrameBytes: number;
  /** SANDBOX_MAX_CALLS: most binding calls per execution (default 10000). */
  maxCalls: number;
  /** SANDBOX_MEMORY_MB: cgroup memory limit per gVisor sandbox, MiB, where cgroups are delegated (default 2560). */
  memoryMb: number;
  /** SANDBOX_PIDS_MAX: cgroup tasks limit per gVisor sandbox (gVisor's own threads count; default 512). */
  pidsMax: number;
  /** LOG_LEVEL (default info). */
  logLevel: string;
}

/**
 * Reads and validates the configuration.
 * @throws ConfigError naming the variable that is wrong and what is expected.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): RunnerConfig {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`environment variable ${String(issue.path[0])} is invalid: ${issue.message}`);
  }
  const c = parsed.data;
  const { host, port } = splitHostPort(c.SANDBOX_RUNNER_ADDR);
  const { host: metricsHost, port: metricsPort } = splitHostPort(c.SANDBOX_RUNNER_METRICS_ADDR);
  return {
    host,
    port,
    metricsHost,
    metricsPort,
    mode: c.SANDBOX_MODE,
    kubernetes: c.SANDBOX_MODE === "kubernetes" ? podTemplate(c) : null,
    insecureNoGvisor: c.SANDBOX_INSECURE_NO_GVISOR,
    maxConcurrent: c.SANDBOX_MAX_CONCURRENT,
    maxWaiting: c.SANDBOX_MAX_WAITING,
    admissionWaitMs: c.SANDBOX_ADMISSION_WAIT_MS,
    dataDir: c.SANDBOX_DATA_DIR,
    warm: c.SANDBOX_WARM,
    idleMs: c.SANDBOX_IDLE_MS,
    maxSandboxes: c.SANDBOX_MAX_SANDBOXES,
    maxFrameBytes: c.SANDBOX_MAX_FRAME_BYTES,
    maxCalls: c.SANDBOX_MAX_CALLS,
    memoryMb: c.SANDBOX_MEMORY_MB,
    pidsMax: c.SANDBOX_PIDS_MAX,
    logLevel: c.LOG_LEVEL,
  };
}

/** The sandbox pod template of SANDBOX_MODE=kubernetes. @throws ConfigError naming a missing variable. */
function podTemplate(c: z.infer<typeof schema>): SandboxPodTemplate {
  for (const name of ["SANDBOX_K8S_NAMESPACE", "SANDBOX_K8S_IMAGE"] as const) {
    if (!c[name])
      throw new ConfigError(
        `environment variable ${name} is required with SANDBOX_MODE=kubernetes (${name === "SANDBOX_K8S_NAMESPACE" ? "the namespace the sandbox pods are created in" : "the image of the sandbox pods, e.g. the chart's sandbox image"})`,
      );
  }
  const runnerName = c.SANDBOX_K8S_RUNNER_NAME ?? hostname().slice(0, 63);
  if (!labelValue.test(runnerName))
    throw new ConfigError(
      `the host name ${JSON.stringify(runnerName)} is not a label value; set SANDBOX_K8S_RUNNER_NAME (e.g. the pod's name from the downward API)`,
    );
  return {
    namespace: c.SANDBOX_K8S_NAMESPACE as string,
    image: c.SANDBOX_K8S_IMAGE as string,
    imagePullPolicy: c.SANDBOX_K8S_IMAGE_PULL_POLICY,
    imagePullSecrets: c.SANDBOX_K8S_IMAGE_PULL_SECRETS,
    runtimeClassName: c.SANDBOX_K8S_RUNTIME_CLASS,
    runnerName,
    cpuRequest: c.SANDBOX_K8S_CPU_REQUEST,
    cpuLimit: c.SANDBOX_K8S_CPU_LIMIT,
    memoryRequestMb: Math.min(c.SANDBOX_K8S_MEMORY_REQUEST_MB, c.SANDBOX_MEMORY_MB),
    memoryLimitMb: c.SANDBOX_MEMORY_MB,
    ephemeralMb: c.SANDBOX_K8S_EPHEMERAL_MB,
    command: DEFAULT_COMMAND,
    inputSilenceMs: c.SANDBOX_K8S_INPUT_SILENCE_MS,
  };
}
