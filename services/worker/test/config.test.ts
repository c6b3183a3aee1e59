/** The worker's environment: GATEKEEPER_APPLY_MAX parsed per gatekeeper kind, wrong values named. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseApplyMax } from "../src/apply-max.ts";
import { loadConfig } from "../src/config.ts";

const base = { GATEHOUSE_DATA_DIR: "/tmp/gatehouse", TEMPORAL_ADDRESS: "127.0.0.1:7233" };

test("GATEKEEPER_APPLY_MAX gives each listed gatekeeper kind its maximum in ms; unset lists none", () => {
  assert.deepEqual(
    loadConfig({ ...base, GATEKEEPER_APPLY_MAX: "mcp=15m, git=90s,other=1500ms" }).applyMaxMs,
    {
      mcp: 900_000,
      git: 90_000,
      other: 1500,
    },
  );
  assert.deepEqual(loadConfig(base).applyMaxMs, {});
  assert.deepEqual(parseApplyMax("mcp=2h"), { mcp: 7_200_000 });
});

test("a wrong GATEKEEPER_APPLY_MAX is refused naming the variable, the part and what is expected", () => {
  for (const [value, expected] of [
    ["mcp=soon", /GATEKEEPER_APPLY_MAX: "mcp=soon" is not kind=duration \(e\.g\. mcp=15m,git=5m\)/],
    ["mcp", /GATEKEEPER_APPLY_MAX: "mcp" is not kind=duration/],
    ["mcp=15m=1", /"mcp=15m=1" is not kind=duration/],
    ["mcp=13h", /GATEKEEPER_APPLY_MAX: "mcp=13h" must be between 1s and 12h/],
    ["git=10ms", /"git=10ms" must be between 1s and 12h/],
  ] as const) {
    assert.throws(() => loadConfig({ ...base, GATEKEEPER_APPLY_MAX: value }), expected, value);
  }
});

test("WORKER_WORKFLOW_BUNDLE is an absolute path of a pre-built bundle; unset bundles at start", () => {
  assert.equal(
    loadConfig({ ...base, WORKER_WORKFLOW_BUNDLE: "/app/worker/workflow-bundle.js" }).workflowBundlePath,
    "/app/worker/workflow-bundle.js",
  );
  assert.equal(loadConfig(base).workflowBundlePath, undefined);
  assert.throws(
    () => loadConfig({ ...base, WORKER_WORKFLOW_BUNDLE: "workflow-bundle.js" }),
    /WORKER_WORKFLOW_BUNDLE.*absolute path/,
  );
});

test("EVENT_STORE_URL selects the backend; GATEHOUSE_DATA_DIR alone means the embedded store; neither is refused", () => {
  assert.equal(loadConfig(base).eventStoreUrl, "sqlite:/tmp/gatehouse/events.sqlite");
  const { GATEHOUSE_DATA_DIR: _, ...noDir } = base;
  assert.equal(
    loadConfig({ ...noDir, EVENT_STORE_URL: "postgres://app:pw@db/gatehouse" }).eventStoreUrl,
    "postgres://app:pw@db/gatehouse",
  );
  assert.throws(() => loadConfig(noDir), /EVENT_STORE_URL: set EVENT_STORE_URL/);
  assert.throws(() => loadConfig({ ...base, EVENT_STORE_URL: "sqlite:" }), /EVENT_STORE_URL: /);
});

test("the built-in agent is off without AGENT_*; on, it needs KERNEL_ADDRESS; a wrong AGENT_* is named", () => {
  assert.equal(loadConfig(base).agent, undefined);
  const on = {
    ...base,
    AGENT_PROVIDER: "openai-compatible",
    AGENT_MODEL: "qwen3-coder",
    AGENT_BASE_URL: "http://127.0.0.1:11434/v1",
  };
  assert.throws(() => loadConfig(on), /KERNEL_ADDRESS is required when the built-in agent is on/);
  const agent = loadConfig({ ...on, KERNEL_ADDRESS: "127.0.0.1:7001", AGENT_TASK_QUEUE: "q1" }).agent;
  assert.equal(agent?.kernelAddress, "127.0.0.1:7001");
  assert.equal(agent?.taskQueue, "q1");
  assert.equal(agent?.config.deployment?.model, "qwen3-coder");
  assert.throws(
    () => loadConfig({ ...on, KERNEL_ADDRESS: "127.0.0.1:7001", AGENT_MAX_STEPS: "0" }),
    /AGENT_MAX_STEPS must be at least 1/,
  );
  assert.throws(
    () =>
      loadConfig({ ...base, AGENT_PROVIDER: "openai-compatible", AGENT_MODEL: "m", KERNEL_ADDRESS: "k:1" }),
    /AGENT_BASE_URL/,
  );
});

test("WORKER_GRPC_ADDR is where the AgentChats service listens (host:port); unset, it is not served", () => {
  assert.equal(loadConfig(base).grpc, undefined);
  assert.deepEqual(loadConfig({ ...base, WORKER_GRPC_ADDR: "0.0.0.0:7008" }).grpc, {
    host: "0.0.0.0",
    port: 7008,
  });
  assert.throws(
    () => loadConfig({ ...base, WORKER_GRPC_ADDR: "7008" }),
    /WORKER_GRPC_ADDR: must be host:port, e\.g\. 0\.0\.0\.0:7008/,
  );
  assert.throws(
    () => loadConfig({ ...base, WORKER_GRPC_ADDR: "h:70080" }),
    /WORKER_GRPC_ADDR: the port must be at most 65535/,
  );
});
