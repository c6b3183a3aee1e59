// @ts-check
/**
 * The VU's side of the harness, inside its worker thread: the synchronous channel to the controller
 * (k6's API is synchronous: an HTTP request blocks the VU until its response), the metric samples the
 * VU produced, and the tags in force. One instance per worker (module state).
 *
 * Channel: the VU posts a message on its port, then blocks on Atomics.wait over a shared Int32Array;
 * the controller (main thread) does the work asynchronously, posts the reply and wakes the VU, which
 * takes the reply with receiveMessageOnPort. Slot REPLY is the reply flag; slot INTERRUPT is set by the
 * controller to end the current iteration (a blocking sleep wakes at once; a request in flight is
 * answered "interrupted").
 */
import { receiveMessageOnPort } from "node:worker_threads";
import { HarnessUnsupported } from "./unsupported.js";

export const REPLY = 0;
export const INTERRUPT = 1;

/** Thrown inside an iteration the controller ended (gracefulStop / gracefulRampDown ran out). */
export class IterationInterrupted extends Error {
  constructor() {
    super("iteration interrupted: the scenario's graceful stop ran out");
    this.name = "IterationInterrupted";
  }
}

/**
 * @typedef {{metric: string, value: number, tags: Record<string, string>, time: number}} Sample
 * @typedef {{name: string, type: "counter" | "gauge" | "rate" | "trend", isTime: boolean}} MetricDef
 */

/** The VU's state: set by vu-worker.js before the script is imported. */
export const vu = {
  /** __VU: 0 for the init/setup/teardown VU, 1… for the test's VUs. */
  id: 0,
  /** "init" while the script's top level runs; "run" in setup, iterations and teardown. */
  phase: /** @type {"init" | "run"} */ ("init"),
  /** Tags every sample of this VU carries now (scenario, the test's and scenario's tags). */
  tags: /** @type {Record<string, string>} */ ({}),
  /** The group path, "" at the top, "::a::b" inside group("a", () => group("b", ...)). */
  group: "",
  /** @type {Int32Array | undefined} */
  ctrl: undefined,
  /** @type {import("node:worker_threads").MessagePort | undefined} */
  port: undefined,
  /** Samples not yet sent to the controller. @type {Sample[]} */
  samples: [],
  /** Metrics this script declared, by name. @type {Map<string, MetricDef>} */
  metrics: new Map(),
};

/**
 * Records a sample with the VU's tags (and group) plus `extra` tags.
 * @param {string} metric
 * @param {number} value
 * @param {Record<string, string>} [extra]
 */
export function emit(metric, value, extra) {
  vu.samples.push({
    metric,
    value,
    tags: { ...vu.tags, group: vu.group, ...(extra ?? {}) },
    time: Date.now(),
  });
  if (vu.samples.length >= 500) flush();
}

/** Sends the pending samples to the controller (asynchronously; the VU does not wait). */
export function flush() {
  if (vu.samples.length === 0 || !vu.port) return;
  vu.port.postMessage({ type: "samples", samples: vu.samples });
  vu.samples = [];
}

/**
 * Asks the controller to do `op` and blocks until it answers; returns the answer.
 * @param {string} op
 * @param {unknown} payload
 * @returns {any}
 * @throws IterationInterrupted when the controller ended the iteration meanwhile.
 */
export function call(op, payload) {
  const { ctrl, port } = vu;
  if (!ctrl || !port) throw new Error("the VU runtime is not connected to the harness controller");
  flush();
  port.postMessage({ type: "call", op, payload });
  Atomics.wait(ctrl, REPLY, 0);
  Atomics.store(ctrl, REPLY, 0);
  const got = receiveMessageOnPort(port);
  if (!got) throw new Error(`the harness controller woke the VU without an answer to ${op}`);
  const reply = got.message;
  if (reply.interrupted) throw new IterationInterrupted();
  if (reply.fatal) throw new HarnessUnsupported(reply.fatal);
  return reply.value;
}

/**
 * Blocks the VU for `ms` milliseconds (k6's sleep); wakes early when the iteration is interrupted.
 * @param {number} ms
 * @throws IterationInterrupted
 */
export function block(ms) {
  const { ctrl } = vu;
  if (!ctrl) throw new Error("the VU runtime is not connected to the harness controller");
  if (ms > 0) Atomics.wait(ctrl, INTERRUPT, 0, ms);
  if (Atomics.load(ctrl, INTERRUPT) !== 0) throw new IterationInterrupted();
}

/**
 * Throws HarnessUnsupported unless the VU is running (setup, an iteration, teardown), for APIs k6
 * forbids in the init context.
 * @param {string} what e.g. "http.get"
 */
export function requireRunPhase(what) {
  if (vu.phase === "init")
    throw new Error(
      `${what} cannot be called in the init context (the script's top level); k6 allows it only in setup(), the scenario functions and teardown()`,
    );
}
