// @ts-check
/**
 * A VU's worker thread: runs the k6 script's init context (its top level) with the harness's k6
 * modules, reports the script's options, exported functions and metrics, then runs what the
 * controller asks — setup(), iterations of a scenario function, teardown() — one at a time, each
 * synchronously as in k6, until told to exit.
 */
import { register } from "node:module";
import { workerData } from "node:worker_threads";
import { call, emit, flush, INTERRUPT, IterationInterrupted, vu } from "./runtime.js";
import { HarnessUnsupported, UNSUPPORTED_MARK } from "./unsupported.js";

register("./hooks.js", import.meta.url);

/** @type {{id: number, scriptUrl: string, env: Record<string, string>, ctrl: SharedArrayBuffer, port: import("node:worker_threads").MessagePort}} */
const init = workerData;
vu.id = init.id;
vu.ctrl = new Int32Array(init.ctrl);
vu.port = init.port;
const g = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (globalThis));
g.__ENV = { ...init.env };
g.__VU = init.id;
g.__ITER = 0;

/**
 * What went wrong, as the controller reports it: "unsupported" (a harness gap), or a script error.
 * @param {unknown} err
 */
function describe(err) {
  const e = /** @type {Error} */ (err);
  const text = String(e?.message ?? err);
  const missing = /The requested module '([^']+)' does not provide an export named '([^']+)'/.exec(text);
  if (missing)
    return {
      unsupported: true,
      error: `${missing[1]}'s export "${missing[2]}" ${UNSUPPORTED_MARK}. Run the script with k6 itself, or add it to loadtests/harness.`,
    };
  const unsupported = e?.name === "HarnessUnsupported" || text.includes(UNSUPPORTED_MARK);
  return { unsupported, error: unsupported ? text : String(e?.stack ?? text) };
}

/** @type {Record<string, unknown>} */
let mod;
try {
  mod = await import(init.scriptUrl);
} catch (err) {
  vu.port.postMessage({ type: "init-error", ...describe(err) });
  vu.port.close();
  throw new Error("init failed"); // ends the worker; the controller already has the reason
}

let options;
try {
  options = mod.options === undefined ? {} : JSON.parse(JSON.stringify(mod.options));
} catch (err) {
  options = { __unserializable: String(err) };
}
vu.port.postMessage({
  type: "ready",
  exports: Object.keys(mod).filter((k) => typeof mod[k] === "function"),
  options,
  metrics: [...vu.metrics.values()],
});
vu.phase = "run";

/** @type {unknown} */
let data;
/** @type {unknown} */
let outcome = null;
for (;;) {
  /** @type {{kind: "exit"} | {kind: "setup" | "teardown" | "iteration", exec: string, iteration: number, env: Record<string, string>, tags: Record<string, string>, group: string, data?: unknown, hasData?: boolean}} */
  const cmd = call("idle", outcome);
  if (cmd.kind === "exit") break;
  if (cmd.hasData) data = cmd.data;
  g.__ITER = cmd.iteration;
  g.__ENV = { ...init.env, ...cmd.env };
  vu.tags = cmd.tags;
  vu.group = cmd.group;
  const fn = mod[cmd.exec];
  const began = Date.now();
  try {
    if (typeof fn !== "function") throw new Error(`the script exports no function "${cmd.exec}"`);
    const value = fn(cmd.kind === "setup" ? undefined : data);
    if (value && typeof (/** @type {{then?: unknown}} */ (value).then) === "function")
      throw new HarnessUnsupported(
        `"${cmd.exec}" returned a promise: async functions ${UNSUPPORTED_MARK}; write the scenario function synchronously, as k6's http API is`,
      );
    outcome = {
      ok: true,
      value: cmd.kind === "setup" && value !== undefined ? JSON.parse(JSON.stringify(value)) : undefined,
    };
  } catch (err) {
    if (err instanceof IterationInterrupted || Atomics.load(vu.ctrl, INTERRUPT) !== 0)
      outcome = { ok: false, interrupted: true };
    else outcome = { ok: false, interrupted: false, ...describe(err) };
  }
  vu.group = "";
  // As in k6: an iteration that threw is complete (and counted); an interrupted one is not.
  if (cmd.kind === "iteration" && !(/** @type {{interrupted?: boolean}} */ (outcome).interrupted)) {
    emit("iteration_duration", Date.now() - began);
    emit("iterations", 1);
  }
}
flush();
vu.port.close();
