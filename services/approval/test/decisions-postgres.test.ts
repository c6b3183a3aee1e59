/**
 * The approval service on PostgreSQL: the decision races with two approval processes on one database
 * (decision-race.ts, shared with the SQLite suite), a database that goes away mid-run (UNAVAILABLE,
 * nothing half-appended), and the start-up refusals (unreachable URL with the password redacted, a schema
 * the migrate command has not created). Real PostgreSQL, Temporal dev server and worker process.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { openEventStore, verifyStream } from "@gatehouse/event-store";
import { freePort } from "@gatehouse/temporal-dev";
import { status } from "@grpc/grpc-js";
import { defineDecisionRaceTests } from "./decision-race.ts";
import { call, description, SECRET, type Stack, startHarness, startStack } from "./harness.ts";
import { rejects, submit } from "./suite-helpers.ts";
import { TcpProxy } from "./tcp-proxy.ts";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../../..");

let stack: Stack;
before(async () => {
  stack = await startStack({ backend: "postgres" });
});
after(async () => {
  await stack?.close();
});

defineDecisionRaceTests(() => stack);

test("the database going away mid-run fails requests with UNAVAILABLE, appends nothing, and they succeed once it is back", async () => {
  const port = stack.postgres?.port ?? 0;
  const proxy = await new TcpProxy({ host: "127.0.0.1", port }).start();
  const viaProxy = stack.storeUrl.replace(`:${port}/`, `:${proxy.port}/`);
  const h = await startHarness(stack, { storeUrl: viaProxy });
  const direct = await openEventStore(stack.storeUrl);
  try {
    await submit(h, "MEM", "before");
    const stream = `workspace-${h.ws}`;
    const revisionBefore = await direct.streamRevision(stream);
    proxy.cut();
    await rejects(
      call(h.queue, "submitAction", {
        callerToken: h.token("MEM"),
        localId: "during",
        description: description(),
        payloadJson: "{}",
      }),
      status.UNAVAILABLE,
      /event store cannot be reached; nothing was recorded, retry/,
    );
    await rejects(
      call(h.decisions, "getLog", { workspaceId: h.ws }),
      status.UNAVAILABLE,
      /event store cannot be reached/,
    );
    assert.equal(await direct.streamRevision(stream), revisionBefore, "nothing was appended while cut");
    proxy.restore();
    const id = await submit(h, "MEM", "during");
    assert.ok(id > 0);
    assert.ok((await direct.streamRevision(stream)) > revisionBefore);
    const verified = await verifyStream(direct, stream);
    assert.equal(verified.ok, true, verified.problem);
  } finally {
    await h.close();
    await direct.close();
    await proxy.close();
  }
});

/** Runs the approval service's main.ts with `env` until it exits (deadline 120 s); resolves its code and output. */
async function approvalExit(env: Record<string, string>): Promise<{ code: number; output: string }> {
  try {
    const r = await run(
      process.execPath,
      ["--no-node-snapshot", "--import", "tsx", "services/approval/src/main.ts"],
      {
        cwd: ROOT,
        timeout: 120_000,
        env: {
          PATH: process.env.PATH ?? "",
          GATEHOUSE_CALLER_TOKEN_SECRET: SECRET,
          TEMPORAL_ADDRESS: stack.temporal.address,
          APPROVAL_ADDR: `127.0.0.1:${await freePort()}`,
          ...env,
        },
      },
    );
    return { code: 0, output: r.stdout + r.stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

test("an unreachable database at start: the service exits 1 naming the URL with the password redacted", async () => {
  const port = await freePort();
  const { code, output } = await approvalExit({
    EVENT_STORE_URL: `postgres://app:s3cret-pw@127.0.0.1:${port}/gatehouse`,
  });
  assert.equal(code, 1, output);
  assert.match(
    output,
    new RegExp(
      `cannot connect to the event store at postgres://app:\\*\\*\\*@127\\.0\\.0\\.1:${port}/gatehouse`,
    ),
  );
  assert.doesNotMatch(output, /s3cret-pw/);
});

test("a database without the Gatehouse schema at start: the service exits 1 naming the migrate command", async () => {
  const unmigrated = stack.storeUrl.replace(/\/gatehouse$/, "/postgres");
  const { code, output } = await approvalExit({ EVENT_STORE_URL: unmigrated });
  assert.equal(code, 1, output);
  assert.match(output, /gatehouse store migrate --url/);
});
