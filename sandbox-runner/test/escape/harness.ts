/**
 * Shared pieces of the escape suite (not a test file).
 *
 * Two layers are attacked:
 * - the isolate, through the runner's public gRPC API (`startSandboxRunner` + `executeSnippet`), exactly as
 *   the kernel drives it; the runner runs under real gVisor whenever runsc is installed;
 * - the container wall, by running a small Node probe script as the command of the same kind of gVisor
 *   container the runner uses (`prepareBundleTemplate` + `startContainer` from src/gvisor), i.e. what a
 *   snippet could do if it ever broke out of the isolate into the isolate host process.
 *
 * Without runsc the isolate attempts run with the gVisor layer off and the container attempts are skipped,
 * unless CI=true or GATEHOUSE_REQUIRE_GVISOR=1, in which case they run and fail loudly.
 */
import assert from "node:assert/strict";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { createServer, type Server } from "node:net";
import type { ExecuteClientMessage, ExecuteResult, ExecuteServerMessage, Limits } from "@gatehouse/proto";
import { SandboxRunnerClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import { RpcTarget } from "capnweb";
import pino, { type Logger } from "pino";
import { executeSnippet, type ServedBinding } from "../../src/client.ts";
import { type BundleTemplate, prepareBundleTemplate, removeBundleTemplate } from "../../src/gvisor/bundle.ts";
import { startContainer } from "../../src/gvisor/container.ts";
import { findRunsc } from "../../src/gvisor/detect.ts";
import { type SandboxRunnerHandle, startSandboxRunner } from "../../src/index.ts";
import { ensureIsolateHost } from "../../src/isolate-host-path.ts";

/** Absolute path of runsc, or null. */
export const RUNSC = findRunsc();
/** CI (or the caller) insists that the gVisor walls are really exercised. */
export const REQUIRE_GVISOR = process.env.CI === "true" || process.env.GATEHOUSE_REQUIRE_GVISOR === "1";
/** The layer the runner under attack uses. */
export const ESCAPE_MODE: "gvisor" | "none" = RUNSC || REQUIRE_GVISOR ? "gvisor" : "none";
/** `skip` option for container-wall suites: runs whenever runsc exists or gVisor is required. */
export const CONTAINER_SKIP: false | string =
  RUNSC || REQUIRE_GVISOR ? false : "runsc not on PATH (set GATEHOUSE_REQUIRE_GVISOR=1 to fail instead)";

let built: Promise<string> | null = null;

/** Builds the isolate host bundle from the current sources, once per test process. */
export function isolateHost(): Promise<string> {
  built ??= ensureIsolateHost(true);
  return built;
}

/** Starts a runner on 127.0.0.1:0 in ESCAPE_MODE (gVisor when installed). */
export async function startEscapeRunner(
  options: { logger?: Logger; maxConcurrent?: number; maxWaiting?: number; admissionWaitMs?: number } = {},
): Promise<SandboxRunnerHandle> {
  await isolateHost();
  const settings = {
    mode: ESCAPE_MODE,
    host: "127.0.0.1",
    port: 0,
    logger: options.logger ?? pino({ level: "silent" }),
    ...(options.maxConcurrent ? { maxConcurrent: options.maxConcurrent } : {}),
    ...(options.maxWaiting !== undefined ? { maxWaiting: options.maxWaiting } : {}),
    ...(options.admissionWaitMs !== undefined ? { admissionWaitMs: options.admissionWaitMs } : {}),
    // Explicit consent to run without gVisor, for runners that ask for it (only used without runsc).
    ...(ESCAPE_MODE === "none" ? { insecureNoGvisor: true } : {}),
  };
  const runner = await startSandboxRunner(settings);
  assert.equal(runner.mode, ESCAPE_MODE);
  return runner;
}

let executions = 0;

/** Options of `exec`. */
export interface ExecOptions {
  workspaceId?: string;
  bindings?: Record<string, ServedBinding>;
  limits?: Partial<Limits>;
  /** Use this client (e.g. a recordingClient) instead of a fresh one. */
  client?: SandboxRunnerClient;
}

/** Runs one snippet through the runner's gRPC API, the kernel's way (default workspace "ws-escape"). */
export function exec(
  runner: SandboxRunnerHandle,
  code: string,
  options: ExecOptions = {},
): Promise<ExecuteResult> {
  executions++;
  return executeSnippet(options.client ?? `127.0.0.1:${runner.port}`, {
    executionId: `escape-${process.pid}-${executions}`,
    workspaceId: options.workspaceId ?? "ws-escape",
    code,
    bindings: options.bindings ?? {},
    limits: options.limits ?? {},
  });
}

/** Asserts the execution failed with `name` and a message matching `message`; returns the error. */
export function assertFailed(
  result: ExecuteResult,
  name: string,
  message: RegExp,
): NonNullable<ExecuteResult["error"]> {
  assert.equal(result.ok, false, `expected ${name}, but the snippet succeeded with ${result.returnJson}`);
  assert.ok(result.error, "a failed result carries an error");
  assert.equal(result.error.name, name, `error was ${result.error.name}: ${result.error.message}`);
  assert.match(result.error.message, message);
  return result.error;
}

/** Asserts the execution succeeded and returns its parsed return value. */
export function returned<T>(result: ExecuteResult): T {
  assert.equal(result.ok, true, `the snippet failed: ${result.error?.name}: ${result.error?.message}`);
  return JSON.parse(result.returnJson) as T;
}

/** A capnweb object returned by Vault.note (stays callable by whoever holds it). */
export class Note extends RpcTarget {
  constructor(
    private readonly text: string,
    private readonly calls: string[],
  ) {
    super();
  }
  read(): string {
    this.calls.push(`read:${this.text}`);
    return this.text;
  }
}

/**
 * The binding the kernel role serves. Tests grant only some of its methods; `secret` is never granted,
 * so a call that reaches it is a capability escape.
 */
export class Vault extends RpcTarget {
  readonly calls: string[] = [];
  constructor(readonly label = "vault") {
    super();
  }
  add(a: number, b: number): number {
    this.calls.push(`add:${a},${b}`);
    return a + b;
  }
  echo(value: unknown): unknown {
    this.calls.push(`echo:${typeof value === "string" ? value.length : typeof value}`);
    return value;
  }
  note(text: string): Note {
    this.calls.push(`note:${text}`);
    return new Note(text, this.calls);
  }
  secret(): string {
    this.calls.push("secret");
    return `the ${this.label} secret`;
  }
}

/** The methods tests grant on a Vault (never `secret`). */
export const VAULT_METHODS = ["add", "echo", "note"];

/** One frame seen on an Execute stream by the kernel role. */
export interface SeenFrame {
  direction: "to-runner" | "from-runner";
  binding: string;
  data: string;
}

/**
 * A SandboxRunner client that records every frame crossing the Execute stream and can inject extra
 * client messages (as a confused or compromised kernel could). Pass `.client` to `exec`.
 */
export function recordingClient(
  runner: SandboxRunnerHandle,
  hooks: { onRunnerFrame?: (frame: SeenFrame, write: (m: ExecuteClientMessage) => void) => void } = {},
): { client: SandboxRunnerClient; frames: SeenFrame[]; close(): void } {
  const client = new SandboxRunnerClient(`127.0.0.1:${runner.port}`, credentials.createInsecure());
  const frames: SeenFrame[] = [];
  const open = client.execute.bind(client);
  client.execute = ((...args: Parameters<typeof open>) => {
    const call = open(...args);
    const write = call.write.bind(call) as (m: ExecuteClientMessage) => boolean;
    call.write = ((message: ExecuteClientMessage, ...rest: unknown[]) => {
      if (message.msg?.$case === "frame") {
        frames.push({
          direction: "to-runner",
          binding: message.msg.frame.binding,
          data: message.msg.frame.data,
        });
      }
      return (write as (m: ExecuteClientMessage, ...r: unknown[]) => boolean)(message, ...rest);
    }) as typeof call.write;
    // Registered before executeSnippet's own listener, so hooks run before capnweb sees the frame.
    call.on("data", (message: ExecuteServerMessage) => {
      if (message.msg?.$case !== "frame") return;
      const seen: SeenFrame = {
        direction: "from-runner",
        binding: message.msg.frame.binding,
        data: message.msg.frame.data,
      };
      frames.push(seen);
      hooks.onRunnerFrame?.(seen, (m) => call.write(m));
    });
    return call;
  }) as typeof client.execute;
  return { client, frames, close: () => client.close() };
}

/** A TCP listener on the host that counts connections (IPv4 or IPv6 loopback). */
export async function tcpListener(host: "127.0.0.1" | "::1"): Promise<{
  port: number;
  connections(): number;
  close(): Promise<void>;
}> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, resolve);
  });
  const address = server.address();
  assert.ok(address && typeof address === "object");
  return {
    port: address.port,
    connections: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A UDP socket on the host's 127.0.0.1 that records every datagram (a DNS server stand-in). */
export async function udpListener(): Promise<{
  port: number;
  datagrams(): string[];
  close(): Promise<void>;
}> {
  const seen: string[] = [];
  const socket: UdpSocket = createSocket("udp4");
  socket.on("message", (msg) => seen.push(msg.toString("latin1")));
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return {
    port: socket.address().port,
    datagrams: () => seen,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** Outcome of one attempt inside a probe container. */
export interface ProbeAttempt {
  ok: boolean;
  value?: unknown;
  code?: string;
  name?: string;
  message?: string;
}

/** Prepares the runner's bundle template (read-only root, binds, uid 65534, ...) for probe containers. */
export async function probeTemplate(): Promise<BundleTemplate> {
  return prepareBundleTemplate(await isolateHost());
}

export { removeBundleTemplate };

/**
 * Prefix of every probe script: `attempt(name, fn)` records `{ok, value}` or the error's code/name/message;
 * `scratch` is the container's writable scratch dir as the bundle announces it.
 */
const PROBE_PRELUDE = `
"use strict";
const results = {};
const scratch = process.env.GATEHOUSE_SCRATCH || process.env.HOME || "/tmp";
async function attempt(name, fn) {
  try {
    const value = await fn();
    results[name] = { ok: true, value: value === undefined ? null : value };
  } catch (e) {
    results[name] = { ok: false, code: e && e.code, name: e && e.name, message: String(e && e.message) };
  }
}
`;

/**
 * Runs `body` (CommonJS, may `await`, uses `attempt`) with node as the command of a fresh container built
 * from `template`, exactly as the runner starts its isolate host. Resolves with each attempt's outcome.
 * The container is force-deleted afterwards; `timeoutMs` bounds the whole run.
 */
export async function probe(
  template: BundleTemplate,
  body: string,
  timeoutMs = 60_000,
): Promise<Record<string, ProbeAttempt>> {
  assert.ok(RUNSC, "runsc is required for container probes");
  const script = `${PROBE_PRELUDE}\n(async () => {\n${body}\n})().then(
    () => process.stdout.write("PROBE-RESULT " + JSON.stringify(results) + "\\n"),
    (e) => process.stdout.write("PROBE-CRASH " + String(e && e.stack) + "\\n"));`;
  const container = await startContainer(RUNSC, template, [template.nodePath, "-e", script]);
  let stdout = "";
  let stderr = "";
  try {
    container.child.stdin.end();
    container.child.stdout.setEncoding("utf8");
    container.child.stderr.setEncoding("utf8");
    container.child.stdout.on("data", (d: string) => {
      stdout += d;
    });
    container.child.stderr.on("data", (d: string) => {
      stderr += d;
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`probe did not finish in ${timeoutMs} ms`)), timeoutMs);
      container.child.on("close", () => {
        clearTimeout(timer);
        resolve();
      });
      container.child.on("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  } finally {
    await container.destroy();
  }
  const line = stdout.split("\n").find((l) => l.startsWith("PROBE-RESULT "));
  assert.ok(
    line,
    `the probe reported no result; stdout: ${stdout.slice(0, 2000)} stderr: ${stderr.slice(0, 2000)}`,
  );
  return JSON.parse(line.slice("PROBE-RESULT ".length)) as Record<string, ProbeAttempt>;
}

/** Asserts a probe attempt failed with one of `codes` (e.g. ["EHOSTUNREACH", "ENETUNREACH"]). */
export function assertRefused(attempt: ProbeAttempt | undefined, codes: string[]): void {
  assert.ok(attempt, "the attempt did not run");
  assert.equal(attempt.ok, false, `the attempt SUCCEEDED: ${JSON.stringify(attempt.value)}`);
  assert.ok(
    codes.includes(String(attempt.code)),
    `expected ${codes.join("|")}, got ${attempt.code} (${attempt.message})`,
  );
}

/** Asserts a probe attempt succeeded (a control or an observation) and returns its value. */
export function succeeded<T>(attempt: ProbeAttempt | undefined): T {
  assert.ok(attempt, "the attempt did not run");
  assert.equal(attempt.ok, true, `the observation failed: ${attempt.code} ${attempt.message}`);
  return attempt.value as T;
}

/** True when `pid` is a live host process. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
