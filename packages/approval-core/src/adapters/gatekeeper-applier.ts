/**
 * The gatekeeper caller used by the lifecycle: ApplyAction and the best-effort ActionRejected
 * notice (proto/gatehouse/v1/gatekeeper.proto); and by the approval service for
 * Gatekeeper.PrepareRevert (RequestRevert). Interfaces so tests can use in-process ones;
 * `GrpcGatekeeperApplier` is the real gRPC client, addressed by gatekeeper kind (a binding's
 * `ResourceIntroduced.gatekeeper`).
 */

import {
  type ActionRejectedRequest,
  type ApplyActionRequest,
  type ApplyActionResponse,
  GatekeeperClient,
  type PrepareRevertRequest,
  type PrepareRevertResponse,
} from "@gatehouse/proto";
import { credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";

/** A call to a gatekeeper failed without a response. */
export class GatekeeperCallError extends Error {
  override name = "GatekeeperCallError";
  /**
   * @param requestMaybeSent false only when the request certainly never reached the gatekeeper
   *   (no address configured, connection never became ready); true means the outcome is unknown.
   * @param code the gRPC status the gatekeeper answered with; undefined when no answer came back
   *   (not configured, unreachable).
   */
  constructor(
    message: string,
    readonly requestMaybeSent: boolean,
    readonly code?: status,
  ) {
    super(message);
  }
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
   * Performs an approved action. Resolves with the gatekeeper's answer (`ok=false` = a known failure).
   * @throws GatekeeperCallError when no answer came back.
   */
  apply(gatekeeper: string, request: ApplyActionRequest): Promise<ApplyActionResponse>;
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
  /** Deadline of ApplyAction once sent (default 60000). */
  applyTimeoutMs?: number;
  /** Deadline of the ActionRejected notice (default 5000). */
  noticeTimeoutMs?: number;
  /** Deadline of PrepareRevert (default 30000). */
  revertTimeoutMs?: number;
}

/** Status codes by which a server says it refused the request before acting on it. */
const REFUSED_BEFORE_ACTING = new Set<number>([
  status.UNIMPLEMENTED,
  status.INVALID_ARGUMENT,
  status.UNAUTHENTICATED,
  status.PERMISSION_DENIED,
  status.NOT_FOUND,
]);

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
  private readonly applyTimeoutMs: number;
  private readonly noticeTimeoutMs: number;
  private readonly revertTimeoutMs: number;

  /** @param addresses gatekeeper kind -> "host:port", e.g. `{ mcp: "127.0.0.1:7003" }`. */
  constructor(
    private readonly addresses: Record<string, string>,
    options: GrpcGatekeeperApplierOptions = {},
  ) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    this.applyTimeoutMs = options.applyTimeoutMs ?? 60_000;
    this.noticeTimeoutMs = options.noticeTimeoutMs ?? 5000;
    this.revertTimeoutMs = options.revertTimeoutMs ?? 30_000;
  }

  async ready(gatekeeper: string): Promise<void> {
    await this.connect(gatekeeper);
  }

  async apply(gatekeeper: string, request: ApplyActionRequest): Promise<ApplyActionResponse> {
    const client = await this.connect(gatekeeper);
    return new Promise((resolve, reject) => {
      client.applyAction(
        request,
        new Metadata(),
        { deadline: Date.now() + this.applyTimeoutMs },
        (err: ServiceError | null, res: ApplyActionResponse) => {
          if (!err) return resolve(res);
          const maybeSent = !REFUSED_BEFORE_ACTING.has(err.code);
          reject(
            new GatekeeperCallError(
              `gatekeeper "${gatekeeper}" ApplyAction failed with ${status[err.code] ?? err.code}: ${err.details}`,
              maybeSent,
              err.code,
            ),
          );
        },
      );
    });
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
      client = new GatekeeperClient(address, credentials.createInsecure());
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
