/**
 * The caller half of the apply protocol (gatekeeper.proto ApplyAction / ApplyActions), used by the
 * lifecycle worker; and the rest of what callers ask gatekeepers by kind: the best-effort
 * ActionRejected notice, and Gatekeeper.PrepareRevert for the approval service (RequestRevert).
 * ApplyAction is server streaming: `running` while the gatekeeper performs the action, then the
 * outcome; how an ApplyActions stream is read is run-stream.ts. Interfaces so tests can use
 * in-process ones; `GrpcGatekeeperApplier` is the real gRPC client, addressed by gatekeeper kind (a
 * binding's `ResourceIntroduced.gatekeeper`). The server half is server.ts.
 */

import {
  type ActionRejectedRequest,
  type ApplyActionProgress,
  type ApplyActionRequest,
  type ApplyActionResponse,
  type ApplyActionRunning,
  type ApplyActionsRequest,
  GatekeeperClient,
  type PrepareRevertRequest,
  type PrepareRevertResponse,
} from "@gatehouse/proto";
import {
  type ClientOptions,
  type ClientReadableStream,
  credentials,
  Metadata,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import { formatMs, GatekeeperCallError, REFUSED_BEFORE_ACTING } from "./call-error.ts";
import { APPLY_MAX_MS_METADATA, DEFAULT_APPLY_MAX_MS } from "./constants.ts";
import { followRun, type RunEnd, type RunWatch } from "./run-stream.ts";

/** What `GatekeeperApplier.apply` reports while it waits. */
export interface ApplyWatch {
  /** Called on each `running` message, with the ms since the gatekeeper received the request. */
  onRunning?(elapsedMs: number): void;
}

/** Asks gatekeepers, by kind, to stage the inverse of an applied action. */
export interface GatekeeperReverter {
  /**
   * Gatekeeper.PrepareRevert: stages the revert of an applied action without touching the
   * external system. Resolves with the revert's local id, description and payload.
   * @throws GatekeeperCallError — `code` FAILED_PRECONDITION (with the gatekeeper's reason) when it
   *   cannot revert that action, UNIMPLEMENTED when the gatekeeper has no PrepareRevert, undefined
   *   when it was not configured or could not be reached.
   */
  prepareRevert(gatekeeper: string, request: PrepareRevertRequest): Promise<PrepareRevertResponse>;
  /** Releases connections. */
  close(): void;
}

/** Calls gatekeepers by kind ("mcp", "git", ...). */
export interface GatekeeperApplier {
  /**
   * Performs an approved action, waiting as long as the gatekeeper reports it running (up to the
   * caller's per-gatekeeper maximum). Resolves with the gatekeeper's answer (`ok=false` = a known
   * failure).
   * @throws GatekeeperCallError when no answer came back: refused before acting
   *   (`requestMaybeSent=false`), lost (connection dropped, gatekeeper silent or gone), or still
   *   running at the maximum (`stillRunning`).
   */
  apply(gatekeeper: string, request: ApplyActionRequest, watch?: ApplyWatch): Promise<ApplyActionResponse>;
  /**
   * Gatekeeper.ApplyActions: performs `request.actions` in order, reporting each outcome through
   * `watch.onOutcome` as it arrives. Per action it waits as long as the gatekeeper reports it running,
   * up to the kind's maximum (applyMaxMs), with the same silence rules as `apply`.
   * @throws GatekeeperCallError (requestMaybeSent=false) when the gatekeeper refused the run before
   *   starting any action (a status before the first `running`, not configured, unreachable).
   */
  applyRun(gatekeeper: string, request: ApplyActionsRequest, watch: RunWatch): Promise<RunEnd>;
  /** Tells the gatekeeper an action was rejected. @throws GatekeeperCallError. */
  notifyRejected(gatekeeper: string, request: ActionRejectedRequest): Promise<void>;
  /**
   * Optional: resolves once the gatekeeper accepts connections (nothing is sent), so a caller can
   * avoid claiming an apply it cannot deliver. @throws GatekeeperCallError (requestMaybeSent=false).
   */
  ready?(gatekeeper: string): Promise<void>;
  /** Releases connections. */
  close(): void;
}

/** Timeouts of GrpcGatekeeperApplier, in milliseconds. */
export interface GrpcGatekeeperApplierOptions {
  /** Wait for a connection before sending (default 5000). */
  connectTimeoutMs?: number;
  /**
   * Longest wait for one ApplyAction by gatekeeper kind, e.g. `{ mcp: 900000 }` (the worker's
   * GATEKEEPER_APPLY_MAX); kinds not listed: DEFAULT_APPLY_MAX_MS. Sent as the call's deadline.
   */
  applyMaxMs?: Record<string, number>;
  /**
   * Silence tolerated beyond the gatekeeper's promise (`next_within_ms`; before the first message,
   * beyond sending) before the call counts as lost (default 10000).
   */
  applyGraceMs?: number;
  /** Deadline of the ActionRejected notice (default 5000). */
  noticeTimeoutMs?: number;
  /** Deadline of PrepareRevert (default 30000). */
  revertTimeoutMs?: number;
  /** grpc-js options of every gatekeeper client (e.g. the caller's tracing interceptor). */
  clientOptions?: ClientOptions;
}

/**
 * Parses "mcp=127.0.0.1:7003,git=127.0.0.1:7004" (GATEKEEPER_ADDRESSES) into
 * `{ mcp: "127.0.0.1:7003", git: "127.0.0.1:7004" }`; blank parts are skipped.
 * @throws Error naming the part that is not kind=host:port.
 */
export function parseGatekeeperAddresses(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [kind, address, ...rest] = part.split("=");
    if (!kind || !address || rest.length > 0 || !/^[^\s:]+:\d{1,5}$/.test(address)) {
      throw new Error(`GATEKEEPER_ADDRESSES: "${part}" is not kind=host:port (e.g. mcp=127.0.0.1:7003)`);
    }
    out[kind] = address;
  }
  return out;
}

/** The real gatekeeper caller: one insecure (loopback/cluster-internal) gRPC channel per kind. */
export class GrpcGatekeeperApplier implements GatekeeperApplier, GatekeeperReverter {
  private readonly clients = new Map<string, GatekeeperClient>();
  private readonly connectTimeoutMs: number;
  private readonly applyMaxMs: Record<string, number>;
  private readonly applyGraceMs: number;
  private readonly noticeTimeoutMs: number;
  private readonly revertTimeoutMs: number;
  private readonly clientOptions: ClientOptions;

  /** @param addresses gatekeeper kind -> "host:port", e.g. `{ mcp: "127.0.0.1:7003" }`. */
  constructor(
    private readonly addresses: Record<string, string>,
    options: GrpcGatekeeperApplierOptions = {},
  ) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    this.applyMaxMs = options.applyMaxMs ?? {};
    this.applyGraceMs = options.applyGraceMs ?? 10_000;
    this.noticeTimeoutMs = options.noticeTimeoutMs ?? 5000;
    this.revertTimeoutMs = options.revertTimeoutMs ?? 30_000;
    this.clientOptions = options.clientOptions ?? {};
  }

  async ready(gatekeeper: string): Promise<void> {
    await this.connect(gatekeeper);
  }

  async apply(
    gatekeeper: string,
    request: ApplyActionRequest,
    watch: ApplyWatch = {},
  ): Promise<ApplyActionResponse> {
    const client = await this.connect(gatekeeper);
    const maxMs = this.applyMaxMs[gatekeeper] ?? DEFAULT_APPLY_MAX_MS;
    const what = `gatekeeper "${gatekeeper}" ApplyAction of action ${request.actionId}`;
    return new Promise((resolve, reject) => {
      const call = client.applyAction(request, new Metadata(), { deadline: Date.now() + maxMs });
      let outcome: ApplyActionResponse | undefined;
      let lost: GatekeeperCallError | undefined;
      let heard = false;
      let settled = false;
      let silence: NodeJS.Timeout | undefined;
      const settle = (err: GatekeeperCallError | null, res?: ApplyActionResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(silence);
        if (err) reject(err);
        else resolve(res as ApplyActionResponse);
      };
      const expectWithin = (promisedMs: number) => {
        clearTimeout(silence);
        const allowMs = promisedMs + this.applyGraceMs;
        silence = setTimeout(() => {
          lost = new GatekeeperCallError(
            `${what}: the gatekeeper stopped reporting on the call (nothing for ${formatMs(allowMs)}); the call was lost`,
            true,
          );
          call.cancel();
        }, allowMs);
      };
      expectWithin(0);
      call.on("data", (m: ApplyActionProgress) => {
        if (m.event?.$case === "running") {
          heard = true;
          expectWithin(m.event.running.nextWithinMs);
          watch.onRunning?.(m.event.running.elapsedMs);
        } else if (m.event?.$case === "outcome") {
          outcome = m.event.outcome;
          clearTimeout(silence);
        }
      });
      call.on("error", (err: ServiceError) => {
        if (lost) return settle(lost);
        if (err.code === status.DEADLINE_EXCEEDED && heard) {
          return settle(
            new GatekeeperCallError(
              `${what}: the gatekeeper was still performing it after ${formatMs(maxMs)}, the longest GATEKEEPER_APPLY_MAX lets the worker wait for "${gatekeeper}"; the call may still be running and may yet succeed, so the outcome is unknown: check the external system before acting again`,
              true,
              err.code,
              true,
            ),
          );
        }
        settle(
          new GatekeeperCallError(
            err.code === status.UNAVAILABLE && /outcome is unknown/.test(err.details ?? "")
              ? `${what}: ${err.details}` // the gatekeeper's own "answer lost" explains itself
              : `${what} failed with ${status[err.code] ?? err.code}: ${err.details}`,
            !REFUSED_BEFORE_ACTING.has(err.code),
            err.code,
          ),
        );
      });
      call.on("end", () =>
        outcome
          ? settle(null, outcome)
          : settle(new GatekeeperCallError(`${what}: the stream ended without an outcome`, true)),
      );
    });
  }

  /**
   * See `GatekeeperApplier.applyRun`; how each message, break and silence is read: `followRun`.
   * The call has no deadline; each action is bounded by the kind's applyMaxMs on this side and the
   * gatekeeper is told it through the `gatehouse-apply-max-ms` metadata (APPLY_MAX_MS_METADATA).
   * `lost.error.requestMaybeSent` is false only when the gatekeeper refused that action with a
   * status before acting on it (it was not performed).
   */
  async applyRun(gatekeeper: string, request: ApplyActionsRequest, watch: RunWatch): Promise<RunEnd> {
    const client = await this.connect(gatekeeper);
    const maxMs = this.applyMaxMs[gatekeeper] ?? DEFAULT_APPLY_MAX_MS;
    const actionIds = request.actions.map((a) => a.actionId);
    const span =
      actionIds.length > 1
        ? `actions ${actionIds[0]}–${actionIds.at(-1)}`
        : actionIds.length === 1
          ? `action ${actionIds[0]}`
          : "an empty run";
    const metadata = new Metadata();
    metadata.set(APPLY_MAX_MS_METADATA, String(maxMs));
    return followRun(
      client.applyActions(request, metadata),
      {
        actionIds,
        maxMs,
        graceMs: this.applyGraceMs,
        what: `gatekeeper "${gatekeeper}" ApplyActions of ${span}`,
        gatekeeper,
      },
      watch,
    );
  }

  async notifyRejected(gatekeeper: string, request: ActionRejectedRequest): Promise<void> {
    const client = await this.connect(gatekeeper);
    await new Promise<void>((resolve, reject) => {
      client.actionRejected(
        request,
        new Metadata(),
        { deadline: Date.now() + this.noticeTimeoutMs },
        (err) =>
          err
            ? reject(
                new GatekeeperCallError(
                  `gatekeeper "${gatekeeper}" ActionRejected failed: ${err.details}`,
                  true,
                ),
              )
            : resolve(),
      );
    });
  }

  async prepareRevert(gatekeeper: string, request: PrepareRevertRequest): Promise<PrepareRevertResponse> {
    const client = await this.connect(gatekeeper);
    return new Promise((resolve, reject) => {
      client.prepareRevert(
        request,
        new Metadata(),
        { deadline: Date.now() + this.revertTimeoutMs },
        (err: ServiceError | null, res: PrepareRevertResponse) => {
          if (!err) return resolve(res);
          const answer =
            err.code === status.UNIMPLEMENTED
              ? "does not implement PrepareRevert (it cannot revert actions)"
              : `answered ${status[err.code] ?? err.code}: ${err.details}`;
          reject(new GatekeeperCallError(`gatekeeper "${gatekeeper}" ${answer}`, true, err.code));
        },
      );
    });
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  private async connect(gatekeeper: string): Promise<GatekeeperClient> {
    const address = this.addresses[gatekeeper];
    if (!address) {
      throw new GatekeeperCallError(
        `no address configured for gatekeeper kind "${gatekeeper}"; add ${gatekeeper}=host:port to GATEKEEPER_ADDRESSES (the request was not sent)`,
        false,
      );
    }
    let client = this.clients.get(gatekeeper);
    if (!client) {
      client = new GatekeeperClient(address, credentials.createInsecure(), this.clientOptions);
      this.clients.set(gatekeeper, client);
    }
    const c = client;
    await new Promise<void>((resolve, reject) =>
      c.waitForReady(Date.now() + this.connectTimeoutMs, (err) =>
        err
          ? reject(
              new GatekeeperCallError(
                `gatekeeper "${gatekeeper}" at ${address} could not be reached within ${this.connectTimeoutMs} ms (the request was not sent)`,
                false,
              ),
            )
          : resolve(),
      ),
    );
    return c;
  }
}

/**
 * Reads an ApplyAction stream to its outcome, with no limit on how long it runs: for tests and
 * simple tools. The lifecycle worker uses `GrpcGatekeeperApplier.apply`, which also treats a
 * silent stream as lost and bounds the wait.
 * @param onRunning called with each `running` message.
 * @returns the `outcome`. @throws the gRPC ServiceError the stream ended with, or an Error when it
 *   ended without an outcome.
 */
export function readApplyOutcome(
  call: ClientReadableStream<ApplyActionProgress>,
  onRunning?: (running: ApplyActionRunning) => void,
): Promise<ApplyActionResponse> {
  return new Promise((resolve, reject) => {
    let outcome: ApplyActionResponse | undefined;
    call.on("data", (m: ApplyActionProgress) => {
      if (m.event?.$case === "running") onRunning?.(m.event.running);
      else if (m.event?.$case === "outcome") outcome = m.event.outcome;
    });
    call.on("error", reject);
    call.on("end", () =>
      outcome ? resolve(outcome) : reject(new Error("ApplyAction ended without an outcome")),
    );
  });
}
