/** WORKER_AGENT_WORKFLOW_BUNDLE: the pre-built agent workflow bundle the services image ships (bundleAgentWorkflows). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConfig } from "../src/config.ts";

const base = {
  TEMPORAL_ADDRESS: "127.0.0.1:7233",
  GATEHOUSE_DATA_DIR: "/tmp/gatehouse-test",
  AGENT_PROVIDER: "openai-compatible",
  AGENT_MODEL: "m",
  AGENT_BASE_URL: "http://127.0.0.1:1/v1",
  KERNEL_ADDRESS: "127.0.0.1:7001",
};

test("WORKER_AGENT_WORKFLOW_BUNDLE is an absolute path of a pre-built agent bundle; unset bundles from source at start", () => {
  assert.equal(
    loadConfig({ ...base, WORKER_AGENT_WORKFLOW_BUNDLE: "/app/worker/agent-workflow-bundle.js" }).agent
      ?.workflowBundlePath,
    "/app/worker/agent-workflow-bundle.js",
  );
  assert.equal(loadConfig(base).agent?.workflowBundlePath, undefined);
  assert.throws(
    () => loadConfig({ ...base, WORKER_AGENT_WORKFLOW_BUNDLE: "agent-workflow-bundle.js" }),
    /WORKER_AGENT_WORKFLOW_BUNDLE.*absolute path/,
  );
});
