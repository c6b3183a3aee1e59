import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { InvalidConfiguration, parseEnv } from "../src/index.ts";

const Schema = z.object({
  PORT: z.coerce.number().int().min(1, "must be a port number, e.g. 8080"),
  MODE: z.enum(["a", "b"]).default("a"),
});

test("parseEnv returns the parsed values with defaults", () => {
  assert.deepEqual(parseEnv(Schema, { PORT: "8080" }, "demo"), { PORT: 8080, MODE: "a" });
});

test("parseEnv names every wrong variable and the service", () => {
  assert.throws(
    () => parseEnv(Schema, { PORT: "0", MODE: "c" }, "demo"),
    (err: Error) =>
      err instanceof InvalidConfiguration &&
      /^invalid demo configuration:\n {2}PORT: must be a port number, e\.g\. 8080\n {2}MODE: /.test(
        err.message,
      ),
  );
});
