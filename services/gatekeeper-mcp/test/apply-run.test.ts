/**
 * ApplyActions against the REAL memory MCP server (stdio, behind a counting tee): a run's tool
 * calls reach the server one after another in run order over the one pooled MCP session, and a
 * call the server fails ends the run: the calls after it never reach the server.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { ApplyActionResponse, ApplyActionsProgress } from "@gatehouse/proto";
import {
  callsReachingServer,
  countedStdio,
  type Harness,
  MEMORY_SERVER,
  startHarness,
  tempDir,
} from "./helpers.ts";

let h: Harness;
let tmp: ReturnType<typeof tempDir>;
let memoryFile: string;
let countFile: string;

before(async () => {
  tmp = tempDir();
  memoryFile = join(tmp.dir, "memory.jsonl");
  countFile = join(tmp.dir, "calls.txt");
  h = await startHarness({
    servers: { memory: countedStdio(countFile, MEMORY_SERVER, [], { MEMORY_FILE_PATH: memoryFile }) },
  });
});
after(async () => {
  await h.close();
  tmp.remove();
});

const create = (name: string) => ({
  tool: "create_entities",
  arguments: { entities: [{ name, entityType: "thing", observations: [`${name} exists`] }] },
});
const observe = (entityName: string) => ({
  tool: "add_observations",
  arguments: { observations: [{ entityName, contents: ["seen"] }] },
});

/** Sends one run; resolves with the outcomes by action id, in the order they came. */
function applyRun(payloads: object[], firstId: number): Promise<[number, ApplyActionResponse][]> {
  const call = h.client.applyActions({
    workspaceId: "ws-1",
    binding: "MEMORY",
    url: "mcp://memory",
    trust: "vetted",
    actions: payloads.map((p, i) => ({
      actionId: firstId + i,
      localId: `l-${firstId + i}`,
      payloadJson: JSON.stringify(p),
      dependencyResults: {},
    })),
  });
  const outcomes: [number, ApplyActionResponse][] = [];
  return new Promise((resolve, reject) => {
    call.on("data", (m: ApplyActionsProgress) => {
      if (m.event?.$case === "outcome") outcomes.push([m.actionId, m.event.outcome]);
    });
    call.on("error", reject);
    call.on("end", () => resolve(outcomes));
  });
}

/** Entity names in the memory file, in the order the server wrote them. */
function entitiesOnServer(): string[] {
  return readFileSync(memoryFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; name?: string })
    .filter((r) => r.type === "entity")
    .map((r) => r.name!);
}

const initializes = async () =>
  Number(
    /method="initialize",outcome="ok"} (\d+)/.exec(
      await h.gk.metrics.registry.getSingleMetricAsString("gatekeeper_mcp_mcp_requests_total"),
    )?.[1] ?? 0,
  );

test("a run of 20 tool calls reaches the server in run order, over one MCP session", async () => {
  const names = Array.from({ length: 20 }, (_, i) => `e${String(i).padStart(2, "0")}`);
  const outcomes = await applyRun(names.map(create), 100);
  assert.deepEqual(
    outcomes.map(([id, r]) => [id, r.ok]),
    names.map((_, i) => [100 + i, true]),
  );
  assert.deepEqual(entitiesOnServer(), names, "written in run order");
  assert.deepEqual(
    callsReachingServer(countFile),
    names.map(() => "create_entities"),
  );
  assert.equal(await initializes(), 1, "one MCP session for the whole run");
});

test("a call the server fails ends the run: later calls never reach the server", async () => {
  const before = callsReachingServer(countFile).length;
  const outcomes = await applyRun([create("f1"), observe("nobody"), create("f3"), create("f4")], 200);
  assert.deepEqual(
    outcomes.map(([id, r]) => [id, r.ok]),
    [
      [200, true],
      [201, false],
    ],
  );
  assert.match(outcomes[1]![1].error, /nobody/);
  assert.deepEqual(callsReachingServer(countFile).slice(before), ["create_entities", "add_observations"]);
  assert.ok(entitiesOnServer().includes("f1"));
  assert.ok(!entitiesOnServer().includes("f3") && !entitiesOnServer().includes("f4"));
});
