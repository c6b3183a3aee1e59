import assert from "node:assert/strict";
import { test } from "node:test";
import { cutUtf8, OutputBuffer } from "../src/output.ts";

test("output past the byte cap is cut at a character boundary and followed by one marker line", () => {
  const out = new OutputBuffer(10);
  out.add("log", "12345");
  out.add("info", "é€abc"); // 2 + 3 + 3 bytes: only "é€" fits in the remaining 5 bytes
  out.add("log", "dropped");
  assert.equal(out.truncated, true);
  assert.deepEqual(
    out.lines.map((l) => l.text),
    ["12345", "é€", "[gatehouse] console output truncated: limit of 10 bytes reached"],
  );
  assert.equal(cutUtf8("€€", 4), "€");
});

test("unknown console levels are reported as log", () => {
  const out = new OutputBuffer(100);
  out.add("trace", "x");
  assert.deepEqual(out.lines, [{ level: "log", text: "x" }]);
  assert.equal(out.truncated, false);
});
