import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { findTemporalCli, startTemporalDevServer, TemporalCliMissing } from "../src/index.ts";

test("a missing CLI is a clear error that says how to install it", () => {
  assert.throws(
    () => findTemporalCli({ PATH: "/nonexistent", HOME: "/nonexistent" }),
    (err: Error) => err instanceof TemporalCliMissing && /npm run setup/.test(err.message),
  );
  assert.throws(
    () => findTemporalCli({ GATEHOUSE_TEMPORAL_CLI: "/nonexistent/temporal" }),
    /not an executable/,
  );
});

test("the dev server listens on loopback, persists to its db file, and stops", async () => {
  const dir = mkdtempSync(join(tmpdir(), "temporal-dev-"));
  try {
    const server = await startTemporalDevServer({ dbFile: join(dir, "temporal.db") });
    assert.match(server.address, /^127\.0\.0\.1:\d+$/);
    await server.close();
    const port = Number(server.address.split(":")[1]);
    const open = await new Promise<boolean>((resolve) => {
      const c = createConnection({ host: "127.0.0.1", port }, () => {
        c.end();
        resolve(true);
      });
      c.once("error", () => resolve(false));
    });
    assert.equal(open, false, "the port is released after close");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a port already in use is refused instead of silently using whatever answers there", async () => {
  const { createServer } = await import("node:net");
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", () => resolve()));
  const addr = squatter.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  try {
    await assert.rejects(startTemporalDevServer({ port }), /already in use/);
  } finally {
    squatter.close();
  }
});
