/** A real Temporal dev server for one test file (the `temporal` CLI, via @temporalio/testing). */
import { findTemporalCli } from "@gatehouse/temporal-dev";
import { TestWorkflowEnvironment } from "@temporalio/testing";
import { DefaultLogger, Runtime } from "@temporalio/worker";

let installed = false;
/** Routes the SDK's own logs to stderr at WARN (TEST_LOG_LEVEL=debug shows more); once per process. */
function installQuietRuntime(): void {
  if (installed) return;
  installed = true;
  const level = process.env.TEST_LOG_LEVEL === "debug" ? "DEBUG" : "WARN";
  Runtime.install({ logger: new DefaultLogger(level) });
}

/** Starts `temporal server start-dev` on a free loopback port. Call `teardown()` in `after`. */
export function startTestTemporal(): Promise<TestWorkflowEnvironment> {
  installQuietRuntime();
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: "existing-path", path: findTemporalCli() },
      log: { format: "pretty", level: "error" },
    },
  });
}
