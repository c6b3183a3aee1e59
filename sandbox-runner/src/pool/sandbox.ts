import type { Logger } from "pino";
import type { KillReason } from "../metrics.ts";
import {
  encodeLine,
  type FromIsolateHost,
  type HostResult,
  type HostStart,
  LineSplitter,
} from "../protocol.ts";
import type { SandboxBackend, SandboxExit, SandboxInstance } from "./backend.ts";

/** Lifecycle state shown by describe(): starting (not ready yet), warm (ready, unassigned), leased (a workspace's). */
export type SandboxState = "starting" | "warm" | "leased";

/** Why a sandbox went away under an execution. */
export type SandboxGone =
  /** It died on its own (killed from outside, crashed, OOM-killed by its cgroup). */
  | { kind: "crash"; exit: SandboxExit }
  /** The runner killed it because of this execution (the isolate host did not honour a limit). */
  | { kind: "killed"; reason: KillReason; exit: SandboxExit | null };

/** Receives one execution's messages from the isolate host. */
export interface ExecutionSink {
  /** One outbound capnweb frame of `binding` (not yet checked against the grant or the caps). */
  onFrame(binding: string, data: string): void;
  /** One console line, already cut by the isolate host's output cap. */
  onConsole(level: string, text: string): void;
  /** The execution's result; the sink is detached afterwards. */
  onResult(result: HostResult): void;
  /** The sandbox went away before the result. */
  onGone(gone: SandboxGone): void;
}

/** Largest protocol line accepted from an isolate host (a frame is capped far lower; this guards memory). */
export const MAX_HOST_LINE_BYTES = 64 * 1024 * 1024;

let counter = 0;

/**
 * One sandbox: a backend instance running the isolate host, and the protocol to it. Runs one execution
 * at a time (`begin` ... `onResult`), each with its own sequence number; messages carrying another
 * sequence number are dropped. Knows the workspace it was assigned to (set once; a sandbox is never
 * reassigned) and how many executions it served.
 */
export class Sandbox {
  /** Runner-unique id ("sb-<n>"). */
  readonly id: string;
  /** Backend that runs it. */
  readonly backendKind: string;
  /** Workspace this sandbox belongs to; null while unassigned (warm). Set once by the pool. */
  workspaceId: string | null = null;
  /** Executions begun on this sandbox (the host's own warm-up not counted). */
  executions = 0;
  /** Date.now() when the last execution ended (or when it became ready). */
  lastUsedAt = Date.now();
  /** performance.now() when it was asked to start. */
  readonly startedAt = performance.now();
  /** Resolves when the isolate host reported ready; rejects when it exits, fails or times out first. */
  readonly ready: Promise<void>;
  /** Set when the runner killed it over a limit (see kill()). */
  killedFor: KillReason | null = null;
  private instance: SandboxInstance | null = null;
  private destroying: Promise<void> | null = null;
  private claimed: Promise<void> | null = null;
  /** Settles once backend.start() has (an instance attached, or the start failed). */
  private readonly started: Promise<void>;
  private isReady = false;
  private exit: SandboxExit | null = null;
  private current: { seq: number; sink: ExecutionSink } | null = null;
  private seq = 0;
  private readonly exitListeners: Array<(exit: SandboxExit) => void> = [];
  private markReady: () => void = () => undefined;
  private failReady: (error: Error) => void = () => undefined;
  private readonly readyTimer: NodeJS.Timeout;

  /** Starts a sandbox through `backend` (asynchronously; await `ready`). Never throws. */
  constructor(
    backend: SandboxBackend,
    readyTimeoutMs: number,
    private readonly logger: Logger,
  ) {
    this.id = `sb-${++counter}`;
    this.backendKind = backend.kind;
    this.ready = new Promise<void>((resolve, reject) => {
      this.markReady = resolve;
      this.failReady = reject;
    });
    this.ready.catch(() => undefined);
    this.readyTimer = setTimeout(() => {
      this.failReady(new Error(`the sandbox did not become ready within ${readyTimeoutMs} ms`));
      void this.destroy();
    }, readyTimeoutMs);
    this.readyTimer.unref();
    this.started = backend.start(this.id).then(
      (instance) => this.attach(instance),
      (error: Error) =>
        this.onEnd({
          code: null,
          signal: null,
          stderrTail: `start failed: ${error.message}`,
          reason: `start failed: ${error.message}`,
        }),
    );
  }

  private attach(instance: SandboxInstance): void {
    this.instance = instance;
    if (this.destroying) {
      void instance.destroy();
    }
    const splitter = new LineSplitter(
      (line) => this.onLine(line),
      MAX_HOST_LINE_BYTES,
      () => void this.kill("message-size", "the isolate host sent an oversized line"),
    );
    instance.onData((chunk) => splitter.push(chunk));
    instance.onExit((exit) => {
      splitter.stop();
      this.onEnd(exit);
    });
  }

  private onEnd(exit: SandboxExit): void {
    if (this.exit) return;
    clearTimeout(this.readyTimer);
    this.exit = exit;
    if (!this.isReady)
      this.failReady(new Error(`the sandbox exited before it was ready (${describeExit(exit)})`));
    const current = this.current;
    this.current = null;
    if (current) {
      current.sink.onGone(
        this.killedFor ? { kind: "killed", reason: this.killedFor, exit } : { kind: "crash", exit },
      );
    }
    for (const listener of this.exitListeners.splice(0)) listener(exit);
    // However it ended, release what the backend holds for it (runsc state, cgroups, bundle dir);
    // destroy is idempotent.
    void this.instance?.destroy();
  }

  /** Host pid of the sandbox process (see SandboxInstance.pid). */
  get pid(): number | null {
    return this.instance?.pid ?? null;
  }

  /** The backend's id for it (runsc container id), or null before it started. */
  get instanceId(): string | null {
    return this.instance?.id ?? null;
  }

  /** True once it has reported ready at least once (even if it is gone since). */
  get wasReady(): boolean {
    return this.isReady;
  }

  /** True until the sandbox process is gone. */
  get alive(): boolean {
    return this.exit === null;
  }

  /** True once the isolate host reported ready (and still alive). */
  get warm(): boolean {
    return this.isReady && this.alive;
  }

  /** True while an execution runs on it. */
  get busy(): boolean {
    return this.current !== null;
  }

  /** Registers a listener for the sandbox's end (fires once; at once if already gone). */
  onExit(listener: (exit: SandboxExit) => void): void {
    if (this.exit) listener(this.exit);
    else this.exitListeners.push(listener);
  }

  /**
   * Begins one execution; messages for it go to `sink` until its result. Returns its sequence number.
   * @throws Error when the sandbox is not ready, gone, or already running an execution (a pool bug).
   */
  begin(start: Omit<HostStart, "seq">, sink: ExecutionSink): number {
    if (!this.warm) throw new Error(`sandbox ${this.id} is not ready`);
    if (this.current) throw new Error(`sandbox ${this.id} already runs an execution`);
    const seq = ++this.seq;
    this.current = { seq, sink };
    this.executions++;
    this.instance?.write(encodeLine({ start: { ...start, seq } }));
    return seq;
  }

  /** Passes one inbound capnweb frame to execution `seq` (dropped if it is not the current one). */
  sendFrame(seq: number, binding: string, data: string): void {
    if (this.current?.seq === seq) this.instance?.write(encodeLine({ frame: { seq, binding, data } }));
  }

  /** Asks the isolate host to end execution `seq` now with this error (it disposes the isolate). */
  abort(seq: number, name: string, message: string): void {
    if (this.current?.seq === seq) this.instance?.write(encodeLine({ abort: { seq, name, message } }));
  }

  /**
   * Kills the sandbox because the isolate host failed a limit (`reason`); the in-flight execution's sink
   * gets `onGone({kind: "killed", reason})`. Resolves when it is destroyed.
   */
  kill(reason: KillReason, detail: string): Promise<void> {
    if (this.alive && !this.killedFor) {
      this.killedFor = reason;
      this.logger.warn({ event: "sandbox_killed", sandbox: this.id, reason, detail }, "killing a sandbox");
    }
    return this.destroy();
  }

  /**
   * Claims it for `workspaceId` in the backend (SandboxInstance.claim; once, later calls share the first).
   * @throws Error when the backend refuses the claim.
   */
  claim(workspaceId: string): Promise<void> {
    this.claimed ??= this.instance?.claim ? this.instance.claim(workspaceId) : Promise.resolve();
    return this.claimed;
  }

  /** Destroys the sandbox (idempotent). An in-flight execution sees a crash unless kill() gave a reason. */
  destroy(): Promise<void> {
    // Still starting: wait for the start to settle, so what it made (a pod) is destroyed too.
    this.destroying ??= this.instance
      ? this.instance.destroy()
      : this.started.then(() => this.instance?.destroy());
    return this.destroying;
  }

  private onLine(line: string): void {
    let message: FromIsolateHost;
    try {
      message = JSON.parse(line) as FromIsolateHost;
    } catch {
      this.logger.warn(
        { event: "isolate_host_bad_line", sandbox: this.id },
        "ignored a line from the isolate host that is not JSON",
      );
      return;
    }
    if (message === null || typeof message !== "object") return;
    if ("ready" in message) {
      if (!this.isReady && this.alive) {
        this.isReady = true;
        this.lastUsedAt = Date.now();
        clearTimeout(this.readyTimer);
        this.markReady();
      }
      return;
    }
    const current = this.current;
    if ("frame" in message) {
      const { seq, binding, data } = message.frame ?? {};
      if (current && seq === current.seq && typeof binding === "string" && typeof data === "string")
        current.sink.onFrame(binding, data);
    } else if ("console" in message) {
      const c = message.console ?? {};
      if (current && c.seq === current.seq) current.sink.onConsole(String(c.level), String(c.text));
    } else if ("result" in message) {
      if (current && message.result?.seq === current.seq) {
        this.current = null;
        this.lastUsedAt = Date.now();
        current.sink.onResult(message.result);
      }
    }
  }
}

/** "signal SIGKILL" / "exit code 3" / "unknown cause", for error messages and logs. */
export function describeExit(exit: SandboxExit | null): string {
  if (exit?.reason) return exit.reason;
  if (exit?.signal) return `signal ${exit.signal}`;
  if (exit && exit.code !== null) return `exit code ${exit.code}`;
  return "unknown cause";
}
