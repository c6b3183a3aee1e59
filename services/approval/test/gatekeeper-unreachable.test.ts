/** The real gRPC gatekeeper client against an address where nothing listens. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { decide, GrpcGatekeeperApplier } from "@gatehouse/approval-core";
import { openSqliteEventStore } from "@gatehouse/event-store";
import { ActionStatus, type DecisionResponse } from "@gatehouse/proto";
import { InProcessLifecycle, WorkspaceStreams } from "../src/index.ts";
import { description, seedWorkspace } from "./harness.ts";

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

test("a gatekeeper that cannot be reached fails the apply with a known outcome (the request was not sent)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-approval-"));
  const store = openSqliteEventStore(join(dir, "events.sqlite"));
  const applier = new GrpcGatekeeperApplier(
    { mcp: `127.0.0.1:${await freePort()}` },
    { connectTimeoutMs: 300 },
  );
  try {
    await seedWorkspace(store, "w1", ["MEM"]);
    const streams = new WorkspaceStreams(store);
    const lifecycle = new InProcessLifecycle({ streams, applier, instanceId: "t" });
    const { events } = await streams.execute("w1", (s) =>
      decide(
        {
          type: "SubmitAction",
          binding: "MEM",
          localId: "a",
          description: description(),
          payloadJson: "{}",
          executionId: "e",
        },
        s,
      ),
    );
    const id = events[0]!.revision;
    const records: DecisionResponse["actions"] = await lifecycle.approve("w1", [id], "user:alice");
    assert.equal(records[0]?.status, ActionStatus.ACTION_STATUS_FAILED);
    assert.equal(records[0]?.outcomeUnknown, false);
    assert.match(records[0]?.reason ?? "", /could not be reached .*not sent/);
  } finally {
    applier.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
