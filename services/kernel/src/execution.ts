/**
 * ExecuteCode: the membrane between the sandbox and the gatekeepers.
 *
 * For one execution the kernel mints a caller token per granted binding, opens the sandbox
 * runner's Execute stream with the workspace's bindings (and nothing else), and relays Cap'n Web
 * frames: a frame the sandbox sends for binding B goes to B's gatekeeper session (opened on first
 * use with the token), and the gatekeeper's frames go back tagged with B. The sandbox never sees an
 * address or a token; a frame for a binding the workspace does not have is dropped. Before each
 * frame goes out, the binding's grant is re-read from the stream: once it was removed
 * (Kernel.RemoveBinding), the session is ended and every awaited call on it is rejected in the
 * snippet with an error naming the binding (revoked-calls.ts); nothing reaches the gatekeeper.
 */
import { createHash, randomUUID } from "node:crypto";
import type { WorkspaceStreams } from "@gatehouse/approval-core";
import { mintCallerToken } from "@gatehouse/caller-token";
import type { EventStore } from "@gatehouse/event-store";
import {
  type Caller,
  CodeExecuted,
  type ExecuteClientMessage,
  ExecuteResult,
  type ExecuteServerMessage,
  type Limits,
  type SandboxRunnerClient,
  type SessionClientMessage,
  type SessionServerMessage,
} from "@gatehouse/proto";
import { bindToActiveContext } from "@gatehouse/telemetry";
import type { ClientDuplexStream } from "@grpc/grpc-js";
import type { Client } from "@temporalio/client";
import type { Logger } from "pino";
import { InvalidArgument } from "./domain/errors.ts";
import { type BindingState, streamOf } from "./domain/workspace.ts";
import { executionRecords } from "./execution-records.ts";
import type { GatekeeperClients } from "./gatekeepers.ts";
import { GrantWatch, revokedMessage } from "./grant-watch.ts";
import { checkExecutionId, runOnce } from "./idempotent-execution.ts";
import type { KernelMetrics } from "./metrics.ts";
import { SessionImports } from "./revoked-calls.ts";
import { storedSnippet } from "./stored-snippet.ts";
import { suspendTurn } from "./turn-suspension.ts";
import type { Workspaces } from "./workspaces.ts";

/** Defaults applied to limits left at 0. */
export const DEFAULT_LIMITS: Limits = { wallTimeMs: 10_000, heapMb: 128, outputBytes: 65_536 };
/** Hard ceilings a request may not exceed. */
export const MAX_LIMITS: Limits = { wallTimeMs: 300_000, heapMb: 1024, outputBytes: 4 * 1024 * 1024 };
/** Largest snippet accepted, bytes. */
export const MAX_CODE_BYTES = 512 * 1024;

export interface ExecutionDeps {
  store: EventStore;
  /** The approval projection and its read–decide–append loop (RemoveBinding decides with it). */
  streams: WorkspaceStreams;
  workspaces: Workspaces;
  gatekeepers: GatekeeperClients;
  runner: SandboxRunnerClient;
  callerTokenSecret: string;
  logger: Logger;
  metrics?: KernelMetrics;
  /** Temporal client for await-decision turns; without it an execution never suspends a turn. */
  temporal?: Client;
}

function effectiveLimits(limits: Limits | undefined): Limits {
  const pick = (k: keyof Limits) => {
    const v = limits?.[k] ?? 0;
    if (v > MAX_LIMITS[k]) throw new InvalidArgument(`limits.${k} must be at most ${MAX_LIMITS[k]}`);
    return v > 0 ? v : DEFAULT_LIMITS[k];
  };
  return { wallTimeMs: pick("wallTimeMs"), heapMb: pick("heapMb"), outputBytes: pick("outputBytes") };
}

/**
 * Runs `code` in the workspace's sandbox with env = its bindings.
 * @returns the sandbox's result (errors in the snippet are results, not exceptions).
 * @throws WorkspaceNotFound, InvalidArgument (empty/oversized code, limits above the ceilings).
 */
export async function executeCode(
  deps: ExecutionDeps,
  req: {
    workspaceId: string;
    code: string;
    caller: Caller | undefined;
    limits: Limits | undefined;
    /** Caller-given id: run at most once (idempotent-execution.ts); "" or absent: a fresh id. */
    executionId?: string;
  },
): Promise<ExecuteResult> {
  if (!req.code.trim())
    throw new InvalidArgument("code is empty; pass a snippet `export default async (env) => {...}`");
  if (Buffer.byteLength(req.code) > MAX_CODE_BYTES) {
    throw new InvalidArgument(`code is larger than ${MAX_CODE_BYTES} bytes`);
  }
  const limits = effectiveLimits(req.limits);
  const state = await deps.workspaces.load(req.workspaceId);
  const caller = req.caller?.kind ? req.caller : { kind: "user", id: "" };
  if (!["agent", "gadget", "user", "hook"].includes(caller.kind)) {
    throw new InvalidArgument(`caller.kind "${caller.kind}" must be one of agent, gadget, user, hook`);
  }
  const given = req.executionId ?? "";
  if (given) {
    checkExecutionId(given);
    const actor = `${caller.kind}:${caller.id}`;
    return runOnce(deps.store, req.workspaceId, given, req.code, actor, () =>
      runExecution(deps, req, caller as Caller, limits, state, given),
    );
  }
  return runExecution(deps, req, caller as Caller, limits, state, "");
}

/** One run of a snippet under `givenId` (its result then recorded in CodeExecuted), or a fresh id. */
async function runExecution(
  deps: ExecutionDeps,
  req: { workspaceId: string; code: string },
  caller: Caller,
  limits: Limits,
  state: Awaited<ReturnType<Workspaces["load"]>>,
  givenId: string,
): Promise<ExecuteResult> {
  const executionId = givenId || randomUUID();
  const bindings = [...state.bindings.values()];
  const startRevision = await deps.store.streamRevision(streamOf(req.workspaceId));
  const relay = new FrameRelay(deps, req.workspaceId, executionId, caller as Caller, bindings);
  relay.watchGrants(new GrantWatch(deps.store, state));
  const started = Date.now();
  let result: ExecuteResult;
  try {
    result = await relay.run(req.code, limits);
  } finally {
    relay.close();
  }
  deps.metrics?.executionSeconds.observe((Date.now() - started) / 1000);
  deps.metrics?.executions.inc({
    outcome: result.ok ? "ok" : result.error?.name === "SandboxUnavailable" ? "unavailable" : "error",
  });
  const actor = `${caller.kind}:${caller.id}`;
  const records = await executionRecords(deps.store, req.workspaceId, executionId, startRevision);
  result = { ...result, submitted: records.submitted, observed: records.observed };
  if (deps.temporal) {
    const awaited = records.submitted.filter((a) => a.awaited).map((a) => a.actionId);
    if (awaited.length > 0) {
      result = {
        ...result,
        turnId: await suspendTurn(deps.store, deps.temporal, req.workspaceId, executionId, awaited, actor),
      };
    }
  }
  await deps.store.append(
    streamOf(req.workspaceId),
    [
      {
        type: "CodeExecuted",
        data: CodeExecuted.toJSON({
          executionId,
          codeSha256: createHash("sha256").update(req.code).digest("hex"),
          ok: result.ok,
          error: result.error ? `${result.error.name}: ${result.error.message}`.slice(0, 500) : "",
          durationMs: Date.now() - started,
          bindings: bindings.map((b) => b.name),
          resultJson: givenId ? JSON.stringify(ExecuteResult.toJSON(result)) : "",
          ...storedSnippet(req.code, result.console),
        }),
        metadata: { actor, caller: caller as Caller },
      },
    ],
    "any",
  );
  return result;
}

/** One execution's streams: the runner stream and a gatekeeper session per binding used. */
class FrameRelay {
  private runnerStream: ClientDuplexStream<ExecuteClientMessage, ExecuteServerMessage> | undefined;
  private readonly sessions = new Map<
    string,
    ClientDuplexStream<SessionClientMessage, SessionServerMessage>
  >();
  private readonly byName: Map<string, BindingState>;
  /** Per binding: the sandbox's imports, to answer its awaited calls once the binding is revoked. */
  private readonly imports = new Map<string, SessionImports>();
  /** Bindings taken back during this execution -> the message their calls are rejected with. */
  private readonly revoked = new Map<string, string>();
  private grants: GrantWatch | undefined;
  /** Outbound frames are forwarded one after another (each waits for its grant check). */
  private outbound: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: ExecutionDeps,
    private readonly workspaceId: string,
    private readonly executionId: string,
    private readonly caller: Caller,
    bindings: BindingState[],
  ) {
    this.byName = new Map(bindings.map((b) => [b.name, b]));
    for (const b of bindings) this.imports.set(b.name, new SessionImports());
  }

  /** Re-checks each binding's grant before its frames go out (without it, grants are not re-checked). */
  watchGrants(watch: GrantWatch): void {
    this.grants = watch;
  }

  run(code: string, limits: Limits): Promise<ExecuteResult> {
    return new Promise<ExecuteResult>((resolve) => {
      let settled = false;
      const finish = (r: ExecuteResult) => {
        if (settled) return;
        settled = true;
        resolve(r);
      };
      const failed = (message: string): ExecuteResult => ({
        ok: false,
        returnJson: "",
        console: [],
        error: { name: "SandboxUnavailable", message, stack: "", line: 0, column: 0 },
        durationMs: 0,
        outputTruncated: false,
        warnings: [],
        executionId: this.executionId,
        turnId: "",
        submitted: [],
        observed: [],
      });
      // Bound to this execution's trace context: the gatekeeper sessions opened from its `data` listener
      // (a binding's first frame) are then part of the ExecuteCode trace.
      const stream = bindToActiveContext(
        this.deps.runner.execute({ deadline: Date.now() + limits.wallTimeMs + 30_000 }),
      );
      this.runnerStream = stream;
      stream.on("data", (msg: ExecuteServerMessage) => {
        const m = msg.msg;
        if (m?.$case === "frame") this.toGatekeeper(m.frame.binding, m.frame.data);
        else if (m?.$case === "result") finish({ ...m.result, executionId: this.executionId });
      });
      stream.on("error", (err: Error) => {
        this.deps.logger.error(
          { event: "runner_stream_error", err: err.message },
          "sandbox runner stream failed",
        );
        finish(failed(`the sandbox runner failed: ${err.message}`));
      });
      stream.on("end", () => finish(failed("the sandbox runner closed the stream without a result")));
      stream.write({
        msg: {
          $case: "start",
          start: {
            executionId: this.executionId,
            workspaceId: this.workspaceId,
            code,
            bindings: [...this.byName.values()].map((b) => ({ name: b.name, methods: b.methods })),
            limits,
          },
        },
      });
    });
  }

  private toGatekeeper(binding: string, data: string): void {
    this.outbound = this.outbound
      .then(() => this.forward(binding, data))
      .catch((err: Error) =>
        this.deps.logger.error(
          { event: "frame_forward_failed", binding, err: err.message },
          "a frame was not relayed",
        ),
      );
  }

  private async forward(binding: string, data: string): Promise<void> {
    const b = this.byName.get(binding);
    const imports = this.imports.get(binding);
    if (!b || !imports) {
      this.deps.logger.warn(
        { event: "frame_for_unknown_binding" },
        "dropped a frame for a binding not granted",
      );
      return;
    }
    if (!this.revoked.has(binding)) {
      const revocation = await this.grants?.revoked(b);
      if (revocation) this.revoke(binding, revokedMessage(revocation));
    }
    const refusal = this.revoked.get(binding);
    if (refusal !== undefined) {
      for (const frame of imports.refuse(data, refusal)) this.toSandbox(binding, frame);
      return;
    }
    imports.outbound(data);
    let session = this.sessions.get(binding);
    if (!session) {
      session = this.open(b);
      this.sessions.set(binding, session);
    }
    session.write({ msg: { $case: "frame", frame: data } });
  }

  private open(b: BindingState): ClientDuplexStream<SessionClientMessage, SessionServerMessage> {
    const token = mintCallerToken(this.deps.callerTokenSecret, {
      workspaceId: this.workspaceId,
      binding: b.name,
      grant: b.grant,
      caller: this.caller as { kind: "agent" | "gadget" | "user" | "hook"; id: string },
      executionId: this.executionId,
    });
    const session = this.deps.gatekeepers.get(b.gatekeeper).openSession();
    session.on("data", (msg: SessionServerMessage) => {
      if (this.revoked.has(b.name)) return; // answered by the kernel already
      this.imports.get(b.name)?.inbound(msg.frame);
      this.toSandbox(b.name, msg.frame);
    });
    session.on("error", (err: Error & { code?: number }) => {
      if (err.code === 1) return; // CANCELLED: we closed it
      this.deps.logger.error(
        { event: "gatekeeper_session_error", binding: b.name, err: err.message },
        "gatekeeper session failed",
      );
    });
    session.write({
      msg: {
        $case: "open",
        open: {
          workspaceId: this.workspaceId,
          binding: b.name,
          url: b.url,
          trust: b.trust,
          callerToken: token,
          executionId: this.executionId,
        },
      },
    });
    return session;
  }

  private toSandbox(binding: string, frame: string): void {
    this.runnerStream?.write({ msg: { $case: "frame", frame: { binding, data: frame } } });
  }

  /** Ends the binding's session and rejects its awaited calls; later frames are answered here. */
  private revoke(binding: string, message: string): void {
    this.revoked.set(binding, message);
    this.deps.logger.info(
      { event: "binding_revoked_in_execution", binding, executionId: this.executionId },
      "a binding was removed while an execution ran; its calls are refused",
    );
    const session = this.sessions.get(binding);
    this.sessions.delete(binding);
    session?.end();
    for (const frame of this.imports.get(binding)?.drain(message) ?? []) this.toSandbox(binding, frame);
  }

  close(): void {
    for (const s of this.sessions.values()) s.end();
    this.sessions.clear();
    this.runnerStream?.end();
  }
}
