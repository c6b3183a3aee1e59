/** Threshold expressions and their evaluation, with k6's meaning (no VUs: the registry and sinks alone). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { HarnessConfigError } from "../harness/controller/errors.ts";
import { Registry, Sink } from "../harness/controller/metrics.ts";
import { evaluateThresholds, parseExpression, parseThresholds } from "../harness/controller/thresholds.ts";

const sample = (metric: string, value: number, tags: Record<string, string> = {}) => ({
  metric,
  value,
  tags,
  time: 0,
});

test("expressions parse every aggregation and operator k6 accepts, with or without spaces", () => {
  assert.deepEqual(parseExpression("p(95)<500"), {
    source: "p(95)<500",
    method: "p",
    pct: 95,
    op: "<",
    value: 500,
  });
  assert.deepEqual(parseExpression("p(99.9) <= 1.5"), {
    source: "p(99.9) <= 1.5",
    method: "p",
    pct: 99.9,
    op: "<=",
    value: 1.5,
  });
  for (const [src, method, op] of [
    ["avg>=3", "avg", ">="],
    ["min > 1", "min", ">"],
    ["max<2", "max", "<"],
    ["med==4", "med", "=="],
    ["count===5", "count", "==="],
    ["rate!=0", "rate", "!="],
    ["value<1", "value", "<"],
  ] as const) {
    const e = parseExpression(src);
    assert.equal(e.method, method, src);
    assert.equal(e.op, op, src);
  }
});

test("a malformed expression is refused naming it and what is wrong", () => {
  assert.throws(
    () => parseExpression("p(95)"),
    (e: Error) =>
      e instanceof HarnessConfigError && /no operator/.test(e.message) && e.message.includes("p(95)"),
  );
  assert.throws(() => parseExpression("p95<3"), /unknown aggregation "p95"/);
  assert.throws(() => parseExpression("avg<fast"), /right-hand side must be a number, got "fast"/);
  assert.throws(() => parseExpression("p(101)<3"), /at most p\(100\)/);
});

test("trend percentiles interpolate linearly between the nearest ranks, as k6 computes them", () => {
  const s = new Sink("trend");
  for (const v of [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]) s.add(v);
  assert.equal(s.percentile(50), 55); // i = 4.5 → 50 + 0.5·10
  assert.equal(s.percentile(90), 91); // i = 8.1 → 90 + 0.1·10
  assert.equal(s.percentile(100), 100);
  assert.equal(s.percentile(0), 10);
  assert.equal(s.aggregate("avg", 1), 55);
  assert.equal(s.aggregate("med", 1), 55);
  assert.equal(new Sink("trend").percentile(99), 0);
});

test("a threshold on each metric type is judged on that type's aggregation; a failing one fails", () => {
  const r = new Registry([
    { name: "lat", type: "trend", isTime: true },
    { name: "ok", type: "rate", isTime: false },
    { name: "n", type: "counter", isTime: false },
    { name: "g", type: "gauge", isTime: false },
  ]);
  const t = parseThresholds(
    { lat: ["p(50)<25", "max<30"], ok: ["rate>0.5"], n: ["count>=3", "rate<2"], g: ["value==7"] },
    r,
  );
  for (const v of [10, 20, 30, 40]) r.add(sample("lat", v));
  for (const v of [1, 1, 0]) r.add(sample("ok", v));
  for (const v of [1, 1, 1]) r.add(sample("n", v));
  r.add(sample("g", 3));
  r.add(sample("g", 7));
  const res = evaluateThresholds(t, r, 2);
  const by = Object.fromEntries(res.map((x) => [`${x.metric} ${x.source}`, x]));
  assert.equal(by["lat p(50)<25"]?.ok, false);
  assert.equal(by["lat p(50)<25"]?.actual, 25);
  assert.equal(by["lat max<30"]?.ok, false);
  assert.equal(by["ok rate>0.5"]?.ok, true);
  assert.equal(by["n count>=3"]?.ok, true);
  assert.equal(by["n rate<2"]?.ok, true, "counter rate is per second of the run: 3 / 2 s");
  assert.equal(by["g value==7"]?.ok, true);
});

test("with no samples a Rate threshold fails (NaN) and a Trend reads 0, as in k6", () => {
  const r = new Registry([
    { name: "ok", type: "rate", isTime: false },
    { name: "lat", type: "trend", isTime: true },
  ]);
  const res = evaluateThresholds(parseThresholds({ ok: ["rate>0.9"], lat: ["p(99)<100"] }, r), r, 1);
  assert.equal(res.find((x) => x.metric === "ok")?.ok, false);
  assert.ok(Number.isNaN(res.find((x) => x.metric === "ok")?.actual));
  assert.equal(res.find((x) => x.metric === "lat")?.actual, 0);
});

test("a submetric takes only the samples carrying every listed tag", () => {
  const r = new Registry();
  const t = parseThresholds({ "http_req_duration{name:inbox,method:GET}": ["max<100"] }, r);
  r.add(sample("http_req_duration", 50, { name: "inbox", method: "GET" }));
  r.add(sample("http_req_duration", 5000, { name: "inbox", method: "POST" }));
  r.add(sample("http_req_duration", 9000, { name: "other", method: "GET" }));
  const [res] = evaluateThresholds(t, r, 1);
  assert.equal(res?.ok, true);
  assert.equal(res?.actual, 50);
  assert.equal(r.sinks.get("http_req_duration")?.count, 3);
});

test("thresholds on an unknown metric, an aggregation the type lacks, or with abortOnFail are refused naming them", () => {
  const r = new Registry([{ name: "ok", type: "rate", isTime: false }]);
  assert.throws(() => parseThresholds({ nope: ["avg<1"] }, r), /no metric named "nope"/);
  assert.throws(
    () => parseThresholds({ ok: ["p(95)<1"] }, r),
    /a rate has no aggregation "p"; its aggregations are rate/,
  );
  assert.throws(() => parseThresholds({ http_reqs: ["avg<1"] }, r), /a counter has no aggregation "avg"/);
  assert.throws(
    () => parseThresholds({ ok: [{ threshold: "rate>0.9", abortOnFail: true }] }, r),
    (e: Error) =>
      e instanceof HarnessConfigError &&
      /"abortOnFail" is not implemented by the Gatehouse k6 test harness/.test(e.message),
  );
  assert.equal(parseThresholds({ ok: [{ threshold: "rate>0.9" }] }, r)[0]?.expressions[0]?.value, 0.9);
});
