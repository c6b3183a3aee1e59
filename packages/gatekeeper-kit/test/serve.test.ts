import assert from "node:assert/strict";
import { test } from "node:test";
import { GatekeeperClient, type GatekeeperServer } from "@gatehouse/proto";
import { credentials, type ServiceError, status } from "@grpc/grpc-js";
import { serveGatekeeper, silentLogger } from "../src/index.ts";

const unimplemented = (_call: unknown, cb: (e: Partial<ServiceError>) => void) =>
  cb({ code: status.UNIMPLEMENTED, details: "test double" });

test("serveGatekeeper serves the implementation, reports health, and closes once: server first, then onClose", async () => {
  const order: string[] = [];
  const impl = {
    resolveResource: (_call: unknown, cb: (e: null, r: object) => void) =>
      cb(null, { binding: "X", trust: "byo", dts: "", methods: [], url: "u" }),
    openSession: () => undefined,
    applyAction: unimplemented,
    actionRejected: unimplemented,
    prepareRevert: unimplemented,
    checkObserver: unimplemented,
  } as unknown as GatekeeperServer;
  const served = await serveGatekeeper({
    name: "test-gatekeeper",
    impl,
    host: "127.0.0.1",
    port: 0,
    logger: silentLogger,
    onClose: () => {
      order.push("onClose");
    },
  });
  const client = new GatekeeperClient(`127.0.0.1:${served.port}`, credentials.createInsecure());
  const res = await new Promise<{ binding: string }>((ok, ko) =>
    client.resolveResource({ url: "u", name: "" }, (e, r) => (e ? ko(e) : ok(r))),
  );
  assert.equal(res.binding, "X");
  assert.equal(served.healthy(), true);
  client.close();
  await Promise.all([served.close(), served.close()]);
  assert.equal(served.healthy(), false);
  assert.deepEqual(order, ["onClose"], "onClose runs once");
});
