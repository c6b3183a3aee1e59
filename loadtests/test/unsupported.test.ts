/**
 * A script that uses a part of the k6 API the harness lacks stops the run with an error naming it
 * (exit code 104 from the command line), never a silent pass or a counted failure; and script errors in
 * init and setup stop it with 107, as k6 does.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { HarnessConfigError, ScriptError } from "../harness/controller/errors.ts";
import { runText, scriptFile } from "./support.ts";

const CLI = join(import.meta.dirname, "../harness/cli.ts");
const once = (body: string, head = "") => `${head}
export const options = { scenarios: { s: { executor: "per-vu-iterations", vus: 1, iterations: 1 } } };
export default function () { ${body} }`;

/** Asserts that running `text` throws HarnessConfigError whose message matches each of `patterns`. */
async function refused(text: string, ...patterns: RegExp[]) {
  await assert.rejects(runText(text), (e: Error) => {
    assert.ok(e instanceof HarnessConfigError, `expected HarnessConfigError, got ${e.name}: ${e.message}`);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
}

test("an unknown k6 module is refused naming it", async () => {
  await refused(
    once("", 'import ws from "k6/ws";'),
    /module "k6\/ws" is not implemented by the Gatehouse k6 test harness/,
    /k6\/http/,
  );
});

test("a remote module (jslib) is refused naming it", async () => {
  await refused(
    once("", 'import { x } from "https://jslib.k6.io/k6-utils/1.4.0/index.js";'),
    /remote module "https:\/\/jslib\.k6\.io/,
  );
});

test("a named import the harness lacks is refused naming the module and export", async () => {
  await refused(
    once("batch([]);", 'import { batch } from "k6/http";'),
    /k6\/http's export "batch" is not implemented/,
  );
});

test("an export reached through the default import is refused when called, stopping the run", async () => {
  await refused(
    once("http.batch([]);", 'import http from "k6/http";'),
    /k6\/http's export "batch"/,
    /it implements: request, get, post, put, patch, del/,
  );
});

test("a request parameter, Response property or response type the harness lacks is refused naming it", async () => {
  const server = "http://127.0.0.1:9/"; // never reached: the parameter is checked first
  await refused(
    once(`http.get("${server}", { redirects: 0 });`, 'import http from "k6/http";'),
    /request parameter "redirects"/,
  );
  await refused(
    once(`http.get("${server}", { responseType: "binary" });`, 'import http from "k6/http";'),
    /responseType "binary"/,
  );
  await refused(
    once(`http.post("${server}", { a: 1 });`, 'import http from "k6/http";'),
    /object body \(form encoding, files\)/,
  );
  await refused(
    once('const r = http.get("http://127.0.0.1:1/"); r.cookies;', 'import http from "k6/http";'),
    /Response property "cookies"/,
  );
});

test("an executor, option or scenario field the harness lacks is refused naming it", async () => {
  await refused(
    `export const options = { scenarios: { s: { executor: "shared-iterations", vus: 1, iterations: 1 } } };
     export default function () {}`,
    /executor "shared-iterations" is not implemented/,
    /constant-vus, ramping-vus, constant-arrival-rate, ramping-arrival-rate, per-vu-iterations/,
  );
  await refused(
    `export const options = { discardResponseBodies: true }; export default function () {}`,
    /option "discardResponseBodies"/,
  );
  await refused(
    `export const options = { vus: 2, duration: "1s" }; export default function () {}`,
    /option "vus".*options\.scenarios/,
  );
  await refused(
    `export const options = { scenarios: { s: { executor: "constant-vus", vus: 1, duration: "1s", maxVUs: 3 } } };
     export default function () {}`,
    /scenarios\.s\.maxVUs is not implemented by the Gatehouse k6 test harness for constant-vus/,
  );
  await refused(
    `export const options = { scenarios: { s: { executor: "constant-vus", vus: 1, duration: "soon" } } };
     export default function () {}`,
    /scenarios\.s\.duration must be a duration/,
  );
  await refused(
    `export const options = { scenarios: { s: { executor: "constant-vus", duration: "1s", exec: "nope" } } };
     export default function () {}`,
    /exports no function "nope"/,
  );
});

test("an async scenario function is refused: k6's http API here is synchronous", async () => {
  await refused(
    once("", "").replace("export default function", "export default async function"),
    /returned a promise/,
  );
});

test("a script that throws in its init context or setup() stops the run as a script error", async () => {
  await assert.rejects(
    runText(`throw new Error("no token"); export default function () {}`),
    (e: Error) => e instanceof ScriptError && /no token/.test(e.message),
  );
  await assert.rejects(
    runText(
      `export function setup() { throw new Error("cannot create workspace"); } export default function () {}`,
    ),
    (e: Error) => e instanceof ScriptError && /setup\(\) threw: .*cannot create workspace/s.test(e.message),
  );
});

test("the command line exits 104 naming what is missing, and 99 when a threshold fails", () => {
  const run = (text: string) => {
    const s = scriptFile(text);
    try {
      return spawnSync(process.execPath, ["--no-node-snapshot", "--import", "tsx", CLI, "run", s.path], {
        encoding: "utf8",
        timeout: 120_000,
      });
    } finally {
      s.cleanup();
    }
  };
  const unsupported = run('import { cookieJar } from "k6/http"; export default function () {}');
  assert.equal(unsupported.status, 104, unsupported.stderr);
  assert.match(unsupported.stderr, /k6\/http's export "cookieJar" is not implemented/);
  const failing = run(`import { Counter } from "k6/metrics";
    const c = new Counter("done");
    export const options = { thresholds: { done: ["count>1"] } };
    export default function () { c.add(1); }`);
  assert.equal(failing.status, 99, failing.stderr);
  assert.match(failing.stdout, /✗ 'count>1' count=1/);
  assert.match(failing.stdout, /1 of 1 thresholds failed: done/);
});

test("a setup() whose JavaScript never yields fails the run at setupTimeout instead of hanging it", async () => {
  const began = Date.now();
  await assert.rejects(
    runText(`
export const options = { setupTimeout: "1s", scenarios: { s: { executor: "per-vu-iterations", vus: 1, iterations: 1 } } };
export function setup() { for (;;) {} }
export default function () {}`),
    (e: Error) => {
      assert.ok(e instanceof ScriptError, `expected ScriptError, got ${e.name}: ${e.message}`);
      assert.match(e.message, /setup\(\) did not finish within 1s \(setupTimeout\)/);
      return true;
    },
  );
  assert.ok(Date.now() - began < 30_000, "the busy setup() did not hang the run");
});
