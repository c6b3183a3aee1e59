import { createServer, type Server } from "node:net";
import type { ExecuteResult, Limits } from "@gatehouse/proto";
import { RpcTarget } from "capnweb";
import pino from "pino";
import { executeSnippet, type ServedBinding } from "../src/client.ts";
import { findRunsc } from "../src/gvisor/detect.ts";
import { type SandboxRunnerHandle, type SandboxRunnerOptions, startSandboxRunner } from "../src/index.ts";
import { ensureIsolateHost } from "../src/isolate-host-path.ts";

/** True when gVisor tests can run here. */
export const HAS_RUNSC = findRunsc() !== null;

/** Modes to run the behaviour suite in: always "none", plus "gvisor" when runsc is installed. */
export const MODES: Array<"none" | "gvisor"> = HAS_RUNSC ? ["none", "gvisor"] : ["none"];

let built: Promise<string> | null = null;

/**
 * Starts a real runner on 127.0.0.1:0, rebuilding the isolate host bundle once per test process.
 * Mode "none" passes the insecure opt-in (the runner refuses it otherwise). `options` override the rest.
 */
export async function startTestRunner(
  mode: "none" | "gvisor",
  options: Partial<SandboxRunnerOptions> = {},
): Promise<SandboxRunnerHandle> {
  await buildIsolateHostOnce();
  return startSandboxRunner({
    mode,
    insecureNoGvisor: mode === "none",
    host: "127.0.0.1",
    port: 0,
    logger: pino({ level: "silent" }),
    ...options,
  });
}

/** Rebuilds dist/isolate-host.cjs from the current sources, once per test process. */
export function buildIsolateHostOnce(): Promise<string> {
  built ??= ensureIsolateHost(true);
  return built;
}

let counter = 0;

/** Runs `code` through the runner's gRPC stream (as `workspaceId`), serving `bindings` with real capnweb sessions. */
export function run(
  runner: SandboxRunnerHandle,
  code: string,
  bindings: Record<string, ServedBinding> = {},
  limits: Partial<Limits> = {},
  workspaceId = "ws-test",
): Promise<ExecuteResult> {
  counter++;
  return executeSnippet(`127.0.0.1:${runner.port}`, {
    executionId: `test-${counter}`,
    workspaceId,
    code,
    bindings,
    limits,
  });
}

/** A capnweb object returned by a binding method (stays callable from the sandbox). */
export class Note extends RpcTarget {
  constructor(
    private text: string,
    private readonly log: string[],
  ) {
    super();
  }
  read(): string {
    this.log.push(`read:${this.text}`);
    return this.text;
  }
  append(more: string): string {
    this.text += more;
    return this.text;
  }
}

/** The main object of a test binding: records every call it receives. */
export class MemoryBinding extends RpcTarget {
  readonly calls: string[] = [];
  add(a: number, b: number): number {
    this.calls.push(`add:${a},${b}`);
    return a + b;
  }
  echo(value: unknown): unknown {
    this.calls.push("echo");
    return value;
  }
  fail(reason: string): never {
    this.calls.push("fail");
    throw new RangeError(`refused: ${reason}`);
  }
  note(text: string): Note {
    this.calls.push(`note:${text}`);
    return new Note(text, this.calls);
  }
}

/** A TCP server on 127.0.0.1:0 that counts accepted connections. */
export async function listeningServer(): Promise<{
  port: number;
  connections: () => number;
  close(): Promise<void>;
}> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    socket.end("hello\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    connections: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
