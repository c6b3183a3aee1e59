/**
 * k6/http on the harness against a loopback server: a VU blocks on each request and gets k6's
 * Response (status, body, canonical header names, json(), timings); a request past its timeout is
 * k6's status 0 / error_code 1050; each request adds k6's samples with its tags; check and group tag
 * theirs.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { loopbackServer, runText } from "./support.ts";

let server: Awaited<ReturnType<typeof loopbackServer>>;
before(async () => {
  server = await loopbackServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/slow") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("event: hello\n\n");
      return; // holds the stream open
    }
    if (url.pathname === "/fail") {
      res.writeHead(500).end("no");
      return;
    }
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () =>
      setTimeout(() => {
        res.writeHead(201, { "content-type": "application/json", "mcp-session-id": "abc" });
        res.end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? "" }));
      }, 50),
    );
  });
});
after(() => server.close());

const script = (body: string) => `
import http from "k6/http";
import { check, group } from "k6";
import { Trend } from "k6/metrics";
const got = new Trend("got");
export const options = { scenarios: { s: { executor: "per-vu-iterations", vus: 1, iterations: 1 } } };
export default function () { ${body} }`;

test("a request blocks the VU until its response, and the Response reads as in k6", async () => {
  const { result, points } = await runText(
    script(`
    const r = http.post(__ENV.BASE + "/echo", JSON.stringify({ a: 1 }), { headers: { authorization: "Bearer t" }, tags: { name: "echo" } });
    const j = r.json();
    check(r, {
      "status": (x) => x.status === 201,
      "canonical header": (x) => x.headers["Mcp-Session-Id"] === "abc" && x.headers["Content-Type"] === "application/json",
      "body sent": () => j.body === '{"a":1}' && j.method === "POST" && j.auth === "Bearer t",
      "timed": (x) => x.timings.duration >= 45 && x.timings.waiting >= 45 && x.timings.duration >= x.timings.waiting,
      "no error": (x) => x.error === "" && x.error_code === 0,
    });
    got.add(r.timings.duration);`),
    { BASE: server.url },
  );
  assert.equal(result.exitCode, 0);
  const failed = result.summary.checks.filter((c) => c.fails > 0).map((c) => c.name);
  assert.deepEqual(failed, []);
  assert.equal(result.summary.checks.length, 5);
  const req = points.find((p) => p.metric === "http_req_duration");
  assert.equal(req?.tags.name, "echo");
  assert.equal(req?.tags.method, "POST");
  assert.equal(req?.tags.status, "201");
  assert.equal(req?.tags.scenario, "s");
  assert.equal(points.find((p) => p.metric === "http_req_failed")?.value, 0);
  assert.equal(points.filter((p) => p.metric === "http_reqs").length, 1);
});

test("a request past its timeout is status 0 with error_code 1050, and counts in http_req_failed", async () => {
  const began = Date.now();
  const { result, points } = await runText(
    script(`
    const r = http.get(__ENV.BASE + "/slow", { timeout: "300ms", tags: { name: "held" } });
    check(r, { "timed out": (x) => x.status === 0 && x.error_code === 1050 && x.error === "request timeout" && x.body === null });
    check(r, { "took the timeout": (x) => x.timings.duration >= 290 && x.timings.duration < 5000 });`),
    { BASE: server.url },
  );
  assert.ok(Date.now() - began < 30_000);
  assert.deepEqual(
    result.summary.checks.filter((c) => c.fails > 0),
    [],
  );
  const failed = points.find((p) => p.metric === "http_req_failed");
  assert.equal(failed?.value, 1);
  assert.equal(failed?.tags.error_code, "1050");
  assert.equal(failed?.tags.status, "0");
});

test("a 5xx answer is a failed request (expected statuses are 200–399), not an exception", async () => {
  const { result, points } = await runText(
    script(
      `const r = http.get(__ENV.BASE + "/fail"); check(r, { "500": (x) => x.status === 500 && x.body === "no" });`,
    ),
    {
      BASE: server.url,
    },
  );
  assert.equal(result.summary.checks[0]?.passes, 1);
  assert.equal(points.find((p) => p.metric === "http_req_failed")?.value, 1);
  assert.equal(points.find((p) => p.metric === "http_req_failed")?.tags.expected_response, "false");
});

test("check and group tag their samples; group adds group_duration", async () => {
  const { points } = await runText(
    script(
      `group("outer", () => group("inner", () => { check(1, { "one": (x) => x === 1, "two": (x) => x === 2 }); }));`,
    ),
  );
  const checks = points.filter((p) => p.metric === "checks");
  assert.deepEqual(
    checks.map((c) => [c.tags.check, c.value, c.tags.group]),
    [
      ["one", 1, "::outer::inner"],
      ["two", 0, "::outer::inner"],
    ],
  );
  assert.deepEqual(
    points.filter((p) => p.metric === "group_duration").map((p) => p.tags.group),
    ["::outer::inner", "::outer"],
  );
});
