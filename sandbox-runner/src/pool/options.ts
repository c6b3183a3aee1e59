/** Sizing and timing of a SandboxPool. */
export interface PoolOptions {
  /** Pre-started unassigned sandboxes kept ready for new workspaces (SANDBOX_WARM, default 2). */
  warm: number;
  /** A workspace's sandbox is destroyed after this long without executions, ms (SANDBOX_IDLE_MS, default 5 min). */
  idleMs: number;
  /** Most sandboxes at once, warm + starting + leased (SANDBOX_MAX_SANDBOXES, default 16). */
  maxSandboxes: number;
  /** A sandbox that has not reported ready after this long is destroyed, ms (default 60 s: starts are slow on a busy machine). */
  readyTimeoutMs: number;
}

/** Defaults of PoolOptions. */
export const DEFAULT_POOL_OPTIONS: PoolOptions = {
  warm: 2,
  idleMs: 5 * 60_000,
  maxSandboxes: 16,
  readyTimeoutMs: 60_000,
};

/** One sandbox as shown by SandboxPool.describe() (tests, status pages). */
export interface SandboxDescription {
  /** Runner-unique sandbox id. */
  id: string;
  /** Backend that runs it ("runsc", "process"). */
  backend: string;
  /** The backend's id for it (the runsc container id; its cgroup is named after it); null before it started. */
  instanceId: string | null;
  /** Host pid of the sandbox process (killing it kills the sandbox); null when unknown. */
  pid: number | null;
  /** Workspace it belongs to; null while warm (or starting unassigned). */
  workspaceId: string | null;
  state: "starting" | "warm" | "leased";
  /** True while an execution runs on it. */
  busy: boolean;
  /** Executions it served. */
  executions: number;
  /** Milliseconds since its last execution ended (or since it became ready). */
  idleMs: number;
}
