/**
 * The gateway's gRPC clients (Backends) take a workspace's whole log when it is larger than gRPC's
 * default 4 MiB message: GetLog answered by an approval service played here over real gRPC
 * (grpc-js on loopback) with 3,000 actions, about 6 MB.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ActionRecord, ActionStatus, DecisionsService, type LogView } from "@gatehouse/proto";
import { listenGrpc, stopGrpc } from "@gatehouse/service-kit";
import { Server, type sendUnaryData } from "@grpc/grpc-js";
import { Backends } from "../src/backends.ts";

let server: Server;
let address: string;
before(async () => {
  server = new Server();
  const title = "t".repeat(2000);
  const view: LogView = {
    workspaceId: "w1",
    revision: 3000,
    latched: false,
    rules: [],
    entries: Array.from({ length: 3000 }, (_, i) => ({
      id: i + 1,
      entry: {
        $case: "action" as const,
        action: ActionRecord.fromPartial({
          id: i + 1,
          workspaceId: "w1",
          binding: "MEMORY",
          status: ActionStatus.ACTION_STATUS_PENDING,
          description: { title },
        }),
      },
    })),
  } as unknown as LogView;
  server.addService(DecisionsService, {
    getLog: (_call: unknown, cb: sendUnaryData<LogView>) => cb(null, view),
  } as never);
  address = `127.0.0.1:${await listenGrpc(server, "127.0.0.1", 0)}`;
});
after(() => stopGrpc(server, 100));

test("a GetLog answer larger than gRPC's default 4 MiB reaches the gateway", async () => {
  const backends = new Backends(address, address);
  const log = await backends.approval(backends.decisions.getLog, { workspaceId: "w1" });
  assert.equal(log.entries.length, 3000);
  backends.close();
});
