import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnTiedToParent } from "@gatehouse/service-kit";
import type { SandboxBackend, SandboxInstance, SandboxIsolation } from "./backend.ts";
import { childInstance } from "./child-instance.ts";

/**
 * What the process backend's sandboxes are walled in by: "none" — INSECURE, the isolate is the only
 * wall (the operator opted in with --insecure-no-gvisor; every result carries `warning`); or
 * "gvisor-pod" — the runner itself runs under gVisor (verified by selectBackend), so its child processes
 * do too, in one gVisor sandbox shared by every workspace of this runner.
 */
export type ProcessIsolation = { isolation: "none"; warning: string } | { isolation: "gvisor-pod" };

/**
 * Process backend: each sandbox is a child process running the isolate host with an empty environment
 * and its own scratch dir under the OS temp dir.
 */
export function createProcessBackend(isolateHostPath: string, layer: ProcessIsolation): SandboxBackend {
  const isolation: SandboxIsolation = layer.isolation;
  return {
    kind: "process",
    isolation,
    warnings: layer.isolation === "none" ? [layer.warning] : [],
    resourceLimits: null,
    async start(id: string): Promise<SandboxInstance> {
      const scratch = await mkdtemp(join(tmpdir(), "gatehouse-scratch-"));
      // Empty environment apart from the scratch dir: the isolate host inherits no secrets from the runner.
      // Tied to the runner: it dies with it, however the runner dies.
      const child = spawnTiedToParent(process.execPath, ["--no-node-snapshot", isolateHostPath], {
        stdio: ["pipe", "pipe", "pipe"],
        env: { GATEHOUSE_SCRATCH: scratch },
        cwd: scratch,
      }) as ChildProcessWithoutNullStreams;
      let destroyed: Promise<void> | null = null;
      return childInstance(id, child, () => {
        destroyed ??= (async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
          await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
        })();
        return destroyed;
      });
    },
    close: async () => undefined,
  };
}
