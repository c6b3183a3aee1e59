/**
 * Runs the REAL MCP gatekeeper's process entry (services/gatekeeper-mcp/src/main.ts) as a child
 * process, to reach it over gRPC from the worker and to kill or freeze it mid-apply.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const GATEKEEPER_MCP_DIR = fileURLToPath(new URL("../../../gatekeeper-mcp", import.meta.url));

/** The slow-tool MCP fixture (an SDK-built stdio server whose write waits for a release file). */
export const SLOW_TOOL_SERVER = join(GATEKEEPER_MCP_DIR, "test/fixtures/slow-tool-server.ts");

export interface GatekeeperProcess {
  /** "127.0.0.1:port" of its gRPC server. */
  address: string;
  child: ChildProcess;
  /** Sends `signal` (default SIGKILL) and, unless it is SIGSTOP, resolves once the process exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts gatekeeper-mcp with a registry holding one vetted stdio server `slow` (SLOW_TOOL_SERVER
 * with SLOW_DIR=`slowDir`); resolves once it logged its configuration (it listens by then).
 */
export async function startMcpGatekeeperProcess(
  slowDir: string,
  timeoutMs = 60_000,
): Promise<GatekeeperProcess> {
  const registry = join(slowDir, "registry.json"); // JSON is YAML
  writeFileSync(
    registry,
    JSON.stringify({
      servers: {
        slow: {
          command: process.execPath,
          args: ["--import", "tsx", SLOW_TOOL_SERVER],
          env: { SLOW_DIR: slowDir },
          vetted: true,
        },
      },
    }),
  );
  const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", "src/main.ts"], {
    cwd: GATEKEEPER_MCP_DIR,
    env: {
      ...process.env,
      GATEKEEPER_MCP_ADDR: "127.0.0.1:0",
      GATEKEEPER_MCP_METRICS_ADDR: "127.0.0.1:0",
      // Never called on the apply path; required by the process.
      APPROVAL_ADDRESS: "127.0.0.1:9",
      GATEKEEPER_MCP_REGISTRY: registry,
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`gatekeeper-mcp did not start: ${output.slice(-2000)}`)),
      timeoutMs,
    );
    child.stdout?.on("data", (d: Buffer) => {
      output = (output + d.toString()).slice(-8000);
      const grpc = /"event":"config","grpc":"([^"]+)"/.exec(output)?.[1];
      if (grpc) {
        clearTimeout(timer);
        resolve(grpc);
      }
    });
    child.stderr?.on("data", (d: Buffer) => {
      output = (output + d.toString()).slice(-8000);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`gatekeeper-mcp exited before it was ready: ${output.slice(-2000)}`));
    });
  });
  return {
    address,
    child,
    async kill(signal: NodeJS.Signals = "SIGKILL") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      if (signal !== "SIGSTOP") await exited;
    },
  };
}
