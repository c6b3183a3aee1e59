/**
 * Test harness: a FakeApprovalQueue gRPC server, a running gatekeeper, capnweb clients over the
 * OpenSession stream, and registry entries for the REAL MCP servers installed in node_modules.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { FrameTransport } from "@gatehouse/gatekeeper-kit";
import { FakeApprovalQueue } from "@gatehouse/gatekeeper-kit/testing";
import { GatekeeperClient, type SessionClientMessage, type SessionServerMessage } from "@gatehouse/proto";
import { type ClientDuplexStream, credentials, type ServiceError } from "@grpc/grpc-js";
import { RpcSession } from "capnweb";
import { pino } from "pino";
import { type McpGatekeeper, startMcpGatekeeper } from "../src/index.ts";
import { createRegistry, type RegistryInput } from "../src/registry.ts";

const NODE_MODULES = resolve(import.meta.dirname, "../../../node_modules");
export const MEMORY_SERVER = join(NODE_MODULES, "@modelcontextprotocol/server-memory/dist/index.js");
export const FS_SERVER = join(NODE_MODULES, "@modelcontextprotocol/server-filesystem/dist/index.js");
export const EVERYTHING_SERVER = join(NODE_MODULES, "@modelcontextprotocol/server-everything/dist/index.js");
export const COUNT_SHIM = resolve(import.meta.dirname, "fixtures/count-stdio.mjs");
export const ODD_SERVER = resolve(import.meta.dirname, "fixtures/odd-annotations-server.ts");

/** Stdio registry entry running `script` under node behind the counting tee (tools/call names -> countFile). */
export function countedStdio(
  countFile: string,
  script: string,
  args: string[] = [],
  env: Record<string, string> = {},
) {
  return {
    command: process.execPath,
    args: [
      COUNT_SHIM,
      countFile,
      process.execPath,
      ...(script.endsWith(".ts") ? ["--import", "tsx"] : []),
      script,
      ...args,
    ],
    env,
    vetted: true,
  };
}

/** The tool names that reached the server, in order, read from a counting tee's file. */
export function callsReachingServer(countFile: string): string[] {
  return toolCallsReachingServer(countFile).map((c) => c.name);
}

/** The tools/call requests that reached the server, in order: tool name and arguments (JSON text). */
export function toolCallsReachingServer(countFile: string): { name: string; argumentsJson: string }[] {
  let text: string;
  try {
    text = readFileSync(countFile, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf("\t");
      return tab < 0
        ? { name: line, argumentsJson: "{}" }
        : { name: line.slice(0, tab), argumentsJson: line.slice(tab + 1) };
    });
}

/** A temp dir removed by the returned function. */
export function tempDir(prefix = "gk-mcp-"): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The kit's FAKE ApprovalQueue (stands in for services/approval; see its doc). */
export { FakeApprovalQueue };

/** A gatekeeper + FakeApprovalQueue + gRPC client, torn down by `close()`. */
export interface Harness {
  gk: McpGatekeeper;
  approval: FakeApprovalQueue;
  client: GatekeeperClient;
  /** Stops the gatekeeper (its MCP clients and stdio children too) and starts a new one on the same approval queue. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startHarness(registry: RegistryInput): Promise<Harness> {
  const approval = await new FakeApprovalQueue().start();
  const startGk = () =>
    startMcpGatekeeper({
      registry: createRegistry(registry),
      approvalAddress: `127.0.0.1:${approval.port}`,
      host: "127.0.0.1",
      port: 0,
      logger: pino({ level: "silent" }),
    });
  const gk = await startGk();
  const h: Harness = {
    gk,
    approval,
    client: new GatekeeperClient(`127.0.0.1:${gk.port}`, credentials.createInsecure()),
    async restart() {
      h.client.close();
      await h.gk.close();
      h.gk = await startGk();
      h.client = new GatekeeperClient(`127.0.0.1:${h.gk.port}`, credentials.createInsecure());
    },
    async close() {
      h.client.close();
      await h.gk.close();
      approval.close();
    },
  };
  return h;
}

/** Promise form of a unary GatekeeperClient call. */
export function unary<Req, Res>(
  fn: (req: Req, cb: (err: ServiceError | null, res: Res) => void) => unknown,
  req: Req,
): Promise<Res> {
  return new Promise((res, rej) => fn(req, (e, r) => (e ? rej(e) : res(r))));
}

export const CALLER_TOKEN = "gh1.test-token.not-a-secret";

/** A capnweb client session over OpenSession, as the kernel would open it. */
/** A binding stub as a test sees it: any method name may be called (capnweb decides at the server). */
// biome-ignore lint/suspicious/noExplicitAny: a dynamic capnweb stub; results are asserted at runtime
export type AnyStub = Record<string, any>;

export function openBinding(
  client: GatekeeperClient,
  binding: string,
  url: string,
  trust = "",
): {
  stub: AnyStub;
  stream: ClientDuplexStream<SessionClientMessage, SessionServerMessage>;
  errors: ServiceError[];
  close(): void;
} {
  const stream = client.openSession();
  const errors: ServiceError[] = [];
  const transport = new FrameTransport({
    onSend: (frame) => stream.write({ msg: { $case: "frame", frame } }),
    onAbort: () => stream.end(),
  });
  stream.on("data", (m: SessionServerMessage) => transport.push(m.frame));
  stream.on("end", () => transport.close());
  stream.on("error", (e: ServiceError) => {
    errors.push(e);
    transport.close(new Error(e.details));
  });
  stream.write({
    msg: {
      $case: "open",
      open: { workspaceId: "ws-1", binding, url, trust, callerToken: CALLER_TOKEN, executionId: "exec-1" },
    },
  });
  const session = new RpcSession(transport);
  return {
    stub: session.getRemoteMain() as unknown as AnyStub,
    stream,
    errors,
    close() {
      stream.end();
      stream.cancel();
    },
  };
}

/** assert.rejects for capnweb RpcPromises (which are callable proxies, not Promise instances). */
export function rejects(
  p: PromiseLike<unknown>,
  matcher?: RegExp | ((e: unknown) => boolean),
): Promise<void> {
  const real = Promise.resolve(p);
  return matcher ? assert.rejects(real, matcher as RegExp) : assert.rejects(real);
}

/**
 * Starts a Streamable HTTP MCP server as a child process (`node ...args`, with `env` added to this
 * process's environment) and resolves once its stderr says "listening on port" (the fixtures and
 * the everything server both print it).
 * @throws naming `label` and the server's stderr when it exits first or is not listening within
 *   `timeoutMs` (default 120 s: a cold tsx start on a busy machine).
 */
export async function startHttpMcpServer(
  label: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((ok, ko) => {
    let err = "";
    const timer = setTimeout(
      () => ko(new Error(`${label} did not start in ${timeoutMs} ms: ${err}`)),
      timeoutMs,
    );
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes("listening on port")) {
        clearTimeout(timer);
        ok();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      ko(new Error(`${label} exited with ${code}: ${err}`));
    });
  });
  return child;
}
