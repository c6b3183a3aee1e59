/**
 * The controller's side of one VU: its worker thread (vu/vu-worker.js), the synchronous channel's
 * other end (it answers the VU's blocking calls: "http", and "idle", whose answer is the VU's next
 * command), its connection pool, and interruption (ends the VU's current iteration: a blocking sleep
 * wakes, a request in flight is aborted; JavaScript that never yields — a busy loop — has its thread
 * terminated once INTERRUPT_GRACE_MS passed, as k6 stops its runtime, so a script bug cannot hang a run).
 */
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import type { Agent } from "undici";
import { type HttpRequest, perform, vuAgent } from "./http-client.ts";
import type { MetricDef, Sample } from "./metrics.ts";

const WORKER = new URL("../vu/vu-worker.js", import.meta.url);
const REPLY = 0;
const INTERRUPT = 1;
/** How long an interrupted VU may take to come back (its sleep wakes, its request aborts) before its thread is terminated. */
export const INTERRUPT_GRACE_MS = 2000;

/** What the VU reports once its init context ran. */
export interface VuReady {
  exports: string[];
  options: Record<string, unknown>;
  metrics: MetricDef[];
}

/** What one command (setup, an iteration, teardown) came to. */
export interface Outcome {
  ok: boolean;
  interrupted?: boolean;
  /** The script's error (message and stack), when not ok. */
  error?: string;
  /** The error is the harness lacking an API the script used. */
  unsupported?: boolean;
  /** setup()'s return value (JSON). */
  value?: unknown;
}

/** A command for the VU. */
export interface Command {
  kind: "setup" | "teardown" | "iteration";
  exec: string;
  iteration: number;
  env: Record<string, string>;
  tags: Record<string, string>;
  group: string;
}

/** Thrown by VuHost.start when the script's init context failed. */
export class InitError extends Error {
  override name = "InitError";
  constructor(
    message: string,
    readonly unsupported: boolean,
  ) {
    super(message);
  }
}

/** One VU. Create with VuHost.start. */
export class VuHost {
  private readonly ctrl: Int32Array;
  private readonly agent: Agent = vuAgent();
  private interruptCtl = new AbortController();
  /** Answers the VU's pending "idle" call: sends its next command. */
  private idle?: (command: unknown) => void;
  private onOutcome?: (o: Outcome) => void;
  private exited: Promise<void>;
  private dataSent = false;
  /** Set once the thread was terminated: the VU takes no further command. */
  private terminated?: string;
  private killTimer?: NodeJS.Timeout;

  private constructor(
    readonly id: number,
    private readonly worker: Worker,
    private readonly port: MessagePort,
    shared: SharedArrayBuffer,
    readonly ready: VuReady,
    /** Sends the VU its next command (the answer to its "idle" call). */
    private readonly answerIdle: (cmd: unknown) => void,
  ) {
    this.ctrl = new Int32Array(shared);
    this.idle = answerIdle;
    this.exited = new Promise((r) => worker.once("exit", () => r()));
  }

  /**
   * Starts VU `id` on `scriptUrl` and waits until its init context ran and it waits for a command.
   * @throws InitError when the script's top level threw (or used an API the harness lacks).
   */
  static start(
    id: number,
    scriptUrl: string,
    env: Record<string, string>,
    onSamples: (s: Sample[]) => void,
  ): Promise<VuHost> {
    const shared = new SharedArrayBuffer(8);
    const ctrl = new Int32Array(shared);
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(WORKER, {
      workerData: { id, scriptUrl, env, ctrl: shared, port: port2 },
      transferList: [port2],
      execArgv: [],
      stdout: false,
      stderr: false,
    });
    return new Promise<VuHost>((resolve, reject) => {
      let host: VuHost | undefined;
      let ready: VuReady | undefined;
      const answer = (value: unknown) => {
        port1.postMessage({ value });
        Atomics.store(ctrl, REPLY, 1);
        Atomics.notify(ctrl, REPLY);
      };
      port1.on("message", (m: { type: string; [k: string]: unknown }) => {
        if (m.type === "samples") return onSamples(m.samples as Sample[]);
        if (m.type === "init-error") return reject(new InitError(String(m.error), Boolean(m.unsupported)));
        if (m.type === "ready") {
          ready = m as unknown as VuReady;
          return;
        }
        if (m.type !== "call") return;
        if (!host) {
          // The first call is the VU's first "idle": it is ready for commands.
          host = new VuHost(id, worker, port1, shared, ready as VuReady, answer);
          resolve(host);
          return;
        }
        host.handle(m.op as string, m.payload);
      });
      worker.once("error", (err) =>
        reject(new InitError(`VU ${id}'s worker failed: ${err.stack ?? err}`, false)),
      );
      worker.once("exit", (code) => {
        if (!host)
          reject(
            new InitError(`VU ${id}'s worker exited (code ${code}) before its init context finished`, false),
          );
      });
    });
  }

  private handle(op: string, payload: unknown): void {
    if (op === "idle") {
      clearTimeout(this.killTimer);
      this.killTimer = undefined;
      this.idle = this.answerIdle;
      const done = this.onOutcome;
      this.onOutcome = undefined;
      done?.(payload as Outcome);
      return;
    }
    if (op === "http") {
      void perform(this.agent, payload as HttpRequest, this.interruptCtl.signal).then((r) =>
        r === "interrupted" ? this.reply({ interrupted: true }) : this.reply({ value: r }),
      );
      return;
    }
    this.reply({ fatal: `the VU asked the controller for "${op}", which it does not know` });
  }

  private reply(message: unknown): void {
    this.port.postMessage(message);
    Atomics.store(this.ctrl, REPLY, 1);
    Atomics.notify(this.ctrl, REPLY);
  }

  /**
   * Runs one command; resolves with its outcome. `data`: setup()'s result, sent to the VU once.
   */
  run(cmd: Command, data?: { value: unknown }): Promise<Outcome> {
    if (this.terminated) return Promise.resolve({ ok: false, interrupted: true, error: this.terminated });
    const send = this.idle;
    if (!send) return Promise.reject(new Error(`VU ${this.id} is busy`));
    this.idle = undefined;
    this.interruptCtl = new AbortController();
    Atomics.store(this.ctrl, INTERRUPT, 0);
    const withData = data && !this.dataSent ? { hasData: true, data: data.value } : {};
    if (data) this.dataSent = true;
    return new Promise<Outcome>((resolve) => {
      this.onOutcome = resolve;
      send({ ...cmd, ...withData });
    });
  }

  /** Ends the current command: its sleep wakes, its request is aborted; the outcome says interrupted. */
  interrupt(): void {
    Atomics.store(this.ctrl, INTERRUPT, 1);
    Atomics.notify(this.ctrl, INTERRUPT);
    this.interruptCtl.abort();
    if (this.idle || this.terminated || this.killTimer) return;
    // A VU blocked in sleep() or a request answers at once; one whose JavaScript never yields cannot
    // see the flag, so its thread is ended and the command counts as interrupted.
    this.killTimer = setTimeout(() => {
      if (this.idle || this.terminated) return;
      this.terminated = `VU ${this.id}'s JavaScript did not yield within ${INTERRUPT_GRACE_MS / 1000}s of being interrupted (a loop that never sleeps or makes a request?): its thread was terminated`;
      void this.worker.terminate();
      const done = this.onOutcome;
      this.onOutcome = undefined;
      done?.({ ok: false, interrupted: true, error: this.terminated });
    }, INTERRUPT_GRACE_MS);
  }

  /** Tells an idle VU to exit and waits for its thread to end (terminates a busy one). */
  async close(): Promise<void> {
    clearTimeout(this.killTimer);
    if (this.idle) this.idle({ kind: "exit" });
    else {
      this.interrupt();
      await this.worker.terminate();
    }
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 5000))]);
    await this.worker.terminate();
    this.port.close();
    await this.agent.close().catch(() => {});
  }
}
