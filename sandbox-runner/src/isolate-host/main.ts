/**
 * Isolate host process entry (bundled to dist/isolate-host.cjs). Protocol: see ../protocol.ts.
 * Long-lived: loads isolated-vm, warms up with one trivial execution, writes `{ready}`, then runs the
 * executions it is sent one at a time, each in a fresh isolate. Before each execution it empties the
 * scratch directory named by GATEHOUSE_SCRATCH (a tmpfs in the sandbox). When stdin closes the process
 * exits at once (the runner is gone).
 */

import { OutputBuffer } from "../output.ts";
import {
  encodeLine,
  type FromIsolateHost,
  type HostStart,
  LineSplitter,
  type ToIsolateHost,
} from "../protocol.ts";
import { type RunningSnippet, startSnippet } from "./execute.ts";
import { IsolateReserve } from "./reserve.ts";
import { wipeScratch } from "./scratch.ts";

const MAX_LINE = 64 * 1024 * 1024;
const scratch = process.env.GATEHOUSE_SCRATCH;
/** Heap size of the reserved isolate before any execution asked for one (the runner's default), MiB. */
const DEFAULT_HEAP_MB = 128;
const reserve = new IsolateReserve();

function write(message: FromIsolateHost): void {
  process.stdout.write(encodeLine(message));
}

/** Exits without Node's teardown: after an isolate hit its memory limit, isolated-vm's native teardown can crash. */
function exitNow(code: number): never {
  return (process as unknown as { reallyExit(code: number): never }).reallyExit(code);
}

/** The execution in progress. */
interface Current {
  seq: number;
  running: RunningSnippet | null;
  /** Frames that arrived before the isolate's deliver hook existed. */
  early: Array<[string, string]>;
  deliver: ((binding: string, data: string) => void) | null;
}

let current: Current | null = null;

function onStart(start: HostStart): void {
  if (current) {
    process.stderr.write("isolate host: start while an execution runs; ignored\n");
    return;
  }
  try {
    if (scratch) wipeScratch(scratch);
  } catch (error) {
    process.stderr.write(`isolate host: cannot wipe the scratch dir: ${(error as Error).message}\n`);
    exitNow(4);
  }
  const seq = start.seq;
  const output = new OutputBuffer(start.limits.outputBytes);
  const state: Current = { seq, running: null, early: [], deliver: null };
  current = state;
  state.running = startSnippet(
    start,
    {
      sendFrame: (binding, data) => write({ frame: { seq, binding, data } }),
      console: (level, text) => {
        const before = output.lines.length;
        output.add(level, text);
        for (const line of output.lines.slice(before)) write({ console: { seq, ...line } });
      },
      onFrame: (fn) => {
        state.deliver = fn;
        for (const [binding, data] of state.early.splice(0)) fn(binding, data);
      },
    },
    reserve,
  );
  void state.running.outcome.then((outcome) => {
    current = null;
    write({ result: { seq, ...outcome, outputTruncated: output.truncated } });
    reserve.refill(start.limits.heapMb);
  });
}

/**
 * GATEHOUSE_INPUT_SILENCE_MS (Kubernetes sandbox pods): exit when nothing has arrived on stdin for this
 * long. The runner pings every few seconds, so this ends a pod whose runner died without its stream
 * closing (a deleted pod's connection can stay open on the API server for minutes), or that no runner
 * ever attached to.
 */
const silenceMs = Number(process.env.GATEHOUSE_INPUT_SILENCE_MS ?? 0);
let silenceTimer: NodeJS.Timeout | null = null;
function armSilence(): void {
  if (!(silenceMs > 0)) return;
  if (silenceTimer) clearTimeout(silenceTimer);
  silenceTimer = setTimeout(() => {
    process.stderr.write(`isolate host: no input from the runner for ${silenceMs} ms, exiting\n`);
    exitNow(0);
  }, silenceMs);
}

function onMessage(message: ToIsolateHost): void {
  if ("start" in message) onStart(message.start);
  else if ("frame" in message) {
    const { seq, binding, data } = message.frame;
    if (!current || current.seq !== seq) return; // a late frame of a finished execution
    if (current.deliver) current.deliver(binding, data);
    else current.early.push([binding, data]);
  } else if ("hello" in message) {
    write({ ready: { pid: process.pid } });
  } else if ("abort" in message) {
    const { seq, name, message: text } = message.abort;
    if (current?.seq === seq) current.running?.abort(String(name), String(text));
  }
}

const splitter = new LineSplitter(
  (line) => {
    let message: ToIsolateHost;
    try {
      message = JSON.parse(line) as ToIsolateHost;
    } catch {
      process.stderr.write("isolate host: ignoring a line that is not JSON\n");
      return;
    }
    onMessage(message);
  },
  MAX_LINE,
  () => {
    process.stderr.write("isolate host: inbound line too long, exiting\n");
    exitNow(2);
  },
);

/** Throwaway executions run before `{ready}`. */
const WARM_UP_RUNS = 3;

/**
 * A few throwaway executions (with a binding call whose frame goes nowhere and a console line), so the
 * first real execution finds V8, isolated-vm, the capnweb code cache and the sandbox's memory warm: under
 * gVisor, first-touch page faults make a cold first execution several times slower.
 */
async function warmUp(): Promise<void> {
  for (let i = 0; i < WARM_UP_RUNS; i++) {
    const running = startSnippet(
      {
        seq: 0,
        code: "export default async (env: any) => { env.WARM.noop(1); console.log('warm'); return Object.keys(env).length; }",
        bindings: [{ name: "WARM", methods: ["noop"] }],
        limits: { wallTimeMs: 30_000, heapMb: DEFAULT_HEAP_MB, outputBytes: 1024 },
        caps: { maxFrameBytes: 4096, maxCalls: 1 },
      },
      { sendFrame: () => undefined, console: () => undefined, onFrame: () => undefined },
      reserve,
    );
    const outcome = await running.outcome;
    if (!outcome.ok)
      throw new Error(`warm-up execution failed: ${outcome.error?.name}: ${outcome.error?.message}`);
  }
}

process.stdin.setEncoding("utf8");
process.stdin.on("end", () => exitNow(0));
warmUp().then(
  () => {
    if (scratch) wipeScratch(scratch);
    reserve.refill(DEFAULT_HEAP_MB);
    write({ ready: { pid: process.pid } });
    // Armed once stdin is read (after warm-up): the runner's {hello} and pings then re-arm it.
    armSilence();
    process.stdin.on("data", (chunk: string) => {
      armSilence();
      splitter.push(chunk);
    });
  },
  (error: Error) => {
    process.stderr.write(`isolate host: ${error.message}\n`);
    exitNow(5);
  },
);
