/**
 * The tool schemas agents see, checked against the committed snapshot (test/tool-schemas.json), so a
 * change to them is a reviewed diff. After an intended change: GATEHOUSE_UPDATE_SNAPSHOT=1 npm test.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { toolJsonSchema } from "../src/tool-registry.ts";
import { AGENT_TOOLS } from "../src/tools/index.ts";

const FILE = join(import.meta.dirname, "tool-schemas.json");

test("the tools' names, annotations and input/output schemas match the snapshot", () => {
  const schemas = AGENT_TOOLS.map((t) => ({
    name: t.name,
    annotations: t.annotations,
    inputSchema: toolJsonSchema(t.input, "input"),
    outputSchema: t.output ? toolJsonSchema(t.output, "output") : undefined,
  }));
  const now = JSON.parse(JSON.stringify(schemas));
  if (process.env.GATEHOUSE_UPDATE_SNAPSHOT) writeFileSync(FILE, `${JSON.stringify(now, null, 2)}\n`);
  assert.deepEqual(
    now,
    JSON.parse(readFileSync(FILE, "utf8")),
    "the schemas changed: review, then GATEHOUSE_UPDATE_SNAPSHOT=1 npm test",
  );
});
