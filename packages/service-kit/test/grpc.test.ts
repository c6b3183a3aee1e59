import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import { Server } from "@grpc/grpc-js";
import { listenGrpc, stopGrpc } from "../src/index.ts";

test("listenGrpc binds a free port and stopGrpc releases it", async () => {
  const server = new Server();
  const port = await listenGrpc(server, "127.0.0.1", 0);
  assert.ok(port > 0);
  await stopGrpc(server);
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen(port, "127.0.0.1", () => resolve());
  });
  probe.close();
});

test("listenGrpc rejects a port already in use", async () => {
  const first = new Server();
  const port = await listenGrpc(first, "127.0.0.1", 0);
  await assert.rejects(listenGrpc(new Server(), "127.0.0.1", port));
  await stopGrpc(first);
});
