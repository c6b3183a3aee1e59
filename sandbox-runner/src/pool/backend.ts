/**
 * The seam between the pool and where sandboxes actually run. A backend starts sandboxes; each sandbox
 * runs the isolate host (dist/isolate-host.cjs) and exposes its stdin/stdout as a text channel that
 * carries the JSON-lines protocol of ../protocol.ts. The pool never looks past this interface.
 *
 * Backends: `runsc` (a long-lived `runsc run` container per sandbox, this host) and `process` (a plain
 * child process: no gVisor of its own — under gVisor only when the runner itself is, "gvisor-pod" — else
 * only with the insecure opt-in), and `kubernetes` (../kubernetes/backend.ts: a pod of the gVisor
 * RuntimeClass per sandbox, reached over its attach stream through the API server; `pid` is null,
 * `destroy` deletes the pod, exits come from the stream closing, explained by the pod's status).
 */

/**
 * The layer in force: "gvisor" (each workspace its own runsc container), "gvisor-pod" (every sandbox a
 * child process inside the runner's own gVisor sandbox, shared by the workspaces of this runner),
 * "none" (the isolate is the only wall).
 */
export type SandboxIsolation = "gvisor" | "gvisor-pod" | "none";

/** How a sandbox ended: exit code or signal of its process as seen by the backend, plus a stderr tail. */
export interface SandboxExit {
  /** Exit code, or null when ended by a signal (or unknown). */
  code: number | null;
  /** Signal name (e.g. "SIGKILL"), or null. Backends translate "128 + n" exit codes into signals. */
  signal: string | null;
  /** Last bytes the sandbox wrote to stderr (for logs only; never sent to callers). */
  stderrTail: string;
  /** Why it ended in the backend's words (e.g. "sandbox pod gh-sb-… was deleted"), when it knows. */
  reason?: string;
}

/** One started sandbox: a running isolate host reachable over a text channel. */
export interface SandboxInstance {
  /** Backend-unique id (the runsc container id, a pod name, ...). */
  readonly id: string;
  /**
   * Host pid of the sandbox process (under runsc: the `runsc-sandbox` process; killing it kills the
   * sandbox), or null when there is none on this host. Known by the time the first stdout chunk (which
   * holds the isolate host's `{ready}` line) is delivered to onData listeners.
   */
  readonly pid: number | null;
  /** Writes protocol text to the isolate host's stdin. Never throws; writes after exit are dropped. */
  write(text: string): void;
  /** Registers the receiver of the isolate host's stdout text (utf-8 chunks, not split into lines). */
  onData(listener: (chunk: string) => void): void;
  /** Registers the receiver of the one exit notification (fires once, also after destroy()). */
  onExit(listener: (exit: SandboxExit) => void): void;
  /**
   * Marks the sandbox as the given workspace's in the backend (the Kubernetes backend labels its pod,
   * with the API's optimistic concurrency, so two runners never take one pod). Optional: backends
   * without shared state have nothing to do.
   * @throws Error when the sandbox cannot be claimed (taken, gone); the pool then drops it.
   */
  claim?(workspaceId: string): Promise<void>;
  /** Kills the sandbox and removes what it left on the host. Idempotent; never throws. */
  destroy(): Promise<void>;
}

/** Starts sandboxes of one kind. */
export interface SandboxBackend {
  /** Backend name for logs and describe(): "runsc", "process", "kubernetes". */
  readonly kind: string;
  /**
   * "gvisor" when every sandbox is its own runsc container, "gvisor-pod" when every sandbox is a child
   * process inside the runner's own gVisor sandbox, "none" when the isolate is the only wall.
   */
  readonly isolation: SandboxIsolation;
  /** Notices every result carries (non-empty exactly when isolation is "none"). */
  readonly warnings: readonly string[];
  /**
   * Memory and task limits each sandbox runs under (a cgroup per runsc sandbox; pod resources on
   * Kubernetes), or null when none apply (e.g. cgroups not delegated on this host).
   */
  readonly resourceLimits: { memoryMb: number; pidsMax: number } | null;
  /**
   * Starts one sandbox running the isolate host. Resolves once its channel is open; the isolate host
   * announces readiness itself with a `{ready}` line.
   * @throws Error when the sandbox cannot be created (bundle, spawn or API failure).
   */
  start(id: string): Promise<SandboxInstance>;
  /** Releases backend-wide resources (e.g. the bundle template). Sandboxes are destroyed before. */
  close(): Promise<void>;
}

/** Signal name for an exit code of the form 128 + n (how `runsc run` reports a killed sandbox). */
export function signalFromExitCode(code: number | null, signals: Record<string, number>): string | null {
  if (code === null || code <= 128) return null;
  const number = code - 128;
  return Object.keys(signals).find((name) => signals[name] === number) ?? null;
}
