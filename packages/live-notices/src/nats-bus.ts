/** The NATS implementation of the notice bus (split mode, Kubernetes, and `gatehouse dev --nats`). */
import type { ChatDelta, LogNotice } from "@gatehouse/gateway-contract";
import type { NatsTlsOptions } from "@gatehouse/service-kit";
import { connect, ErrorCode, Events, type NatsConnection, type Subscription } from "nats";
import type { NoticeBus, NoticeListener } from "./bus.ts";
import {
  ALL_CHAT_DELTA_SUBJECTS,
  ALL_LOG_SUBJECTS,
  ChatDeltaSchema,
  chatDeltaSubject,
  LogNoticeSchema,
  logSubject,
} from "./subjects.ts";

/** Options of {@link connectNatsNoticeBus}. */
export interface NatsNoticeBusOptions {
  /** NATS server URL(s), e.g. "nats://127.0.0.1:4222" (comma-separated list allowed). */
  servers: string;
  /**
   * TLS (tls:// servers or NATS_TLS_*: see service-kit's `natsTls`): CA, client certificate and key
   * files, re-read on every reconnect. Set, the client refuses a server that does not offer TLS.
   * Absent: plaintext unless the server requires TLS.
   */
  tls?: NatsTlsOptions;
  /** Connection name shown by the server's monitoring (e.g. "gatehouse-gateway"). */
  name: string;
  /** Wait between reconnect attempts, ms (default 500). Reconnects are attempted forever. */
  reconnectTimeWaitMs?: number;
  /** Receives connection state changes and dropped malformed notices (for logs). */
  onStatus?: (event: { type: string; detail?: string }) => void;
}

/** NATS could not be reached at start-up. */
export class NatsUnreachable extends Error {
  override name = "NatsUnreachable";
  constructor(servers: string, cause: unknown, tls?: NatsTlsOptions) {
    const fix = tls
      ? "start nats-server with TLS or fix NATS_URL, NATS_TLS_CA_FILE (the CA that signed the server's certificate) or NATS_TLS_CERT_FILE/NATS_TLS_KEY_FILE"
      : "start nats-server or fix NATS_URL";
    super(`cannot connect to NATS at ${servers}: ${natsCause(cause, tls)}; ${fix}`);
  }
}

/** The message of a connect failure, with the TLS error nats.js wraps (e.g. "self-signed certificate in certificate chain"). */
function natsCause(cause: unknown, tls: NatsTlsOptions | undefined): string {
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as Error & { code?: string }).code;
  if (tls && code === ErrorCode.ServerOptionNotAvailable && cause.message === "tls")
    return "the server does not offer TLS (the client never falls back to plaintext)";
  if (tls && !tls.certFile && code === ErrorCode.Timeout)
    return "timed out during the TLS handshake (a server that verifies clients needs NATS_TLS_CERT_FILE/NATS_TLS_KEY_FILE)";
  const inner = (cause as Error & { chainedError?: Error }).chainedError ?? cause.cause;
  return inner instanceof Error && !cause.message.includes(inner.message)
    ? `${cause.message} (${inner.message})`
    : cause.message;
}

/**
 * Connects to NATS and returns a {@link NoticeBus}. After the first connection succeeds the client
 * reconnects forever; publishes while disconnected are buffered by the client, and every reconnect
 * makes each listener `resync` (notices may have been missed — the projection is re-read).
 * @throws NatsUnreachable when the first connection fails (within ~5 s).
 */
export async function connectNatsNoticeBus(options: NatsNoticeBusOptions): Promise<NoticeBus> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: options.servers.split(",").map((s) => s.trim()),
      name: options.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: options.reconnectTimeWaitMs ?? 500,
      timeout: 5000,
      ...(options.tls ? { tls: options.tls } : {}),
    });
  } catch (err) {
    throw new NatsUnreachable(options.servers, err, options.tls);
  }
  return new NatsNoticeBus(nc, options.onStatus);
}

class NatsNoticeBus implements NoticeBus {
  private readonly listeners = new Set<NoticeListener>();
  private subscription: Subscription | undefined;
  private deltaSubscription: Subscription | undefined;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly onStatus: NatsNoticeBusOptions["onStatus"],
  ) {
    void this.watchStatus();
  }

  publish(notice: LogNotice): void {
    this.send(logSubject(notice.workspaceId), notice);
  }

  publishChatDelta(delta: ChatDelta): void {
    this.send(chatDeltaSubject(delta.workspaceId), delta);
  }

  private send(subject: string, payload: LogNotice | ChatDelta): void {
    if (this.closed) return;
    try {
      this.nc.publish(subject, JSON.stringify(payload));
    } catch (err) {
      // Closed or draining connection: notices are best effort; subscribers resync on reconnect.
      this.onStatus?.({ type: "publish_failed", detail: err instanceof Error ? err.message : String(err) });
    }
  }

  subscribe(listener: NoticeListener): () => void {
    this.listeners.add(listener);
    this.subscription ??= this.nc.subscribe(ALL_LOG_SUBJECTS, {
      callback: (err, msg) => {
        if (err) return;
        let parsed: ReturnType<typeof LogNoticeSchema.safeParse>;
        try {
          parsed = LogNoticeSchema.safeParse(JSON.parse(new TextDecoder().decode(msg.data)));
        } catch {
          parsed = LogNoticeSchema.safeParse(undefined);
        }
        if (!parsed.success) {
          this.onStatus?.({ type: "malformed_notice", detail: msg.subject });
          return;
        }
        for (const l of [...this.listeners]) l.notice(parsed.data);
      },
    });
    this.deltaSubscription ??= this.nc.subscribe(ALL_CHAT_DELTA_SUBJECTS, {
      callback: (err, msg) => {
        if (err) return;
        let parsed: ReturnType<typeof ChatDeltaSchema.safeParse>;
        try {
          parsed = ChatDeltaSchema.safeParse(JSON.parse(new TextDecoder().decode(msg.data)));
        } catch {
          parsed = ChatDeltaSchema.safeParse(undefined);
        }
        if (!parsed.success) {
          this.onStatus?.({ type: "malformed_chat_delta", detail: msg.subject });
          return;
        }
        for (const l of [...this.listeners]) l.chatDelta?.(parsed.data);
      },
    });
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await this.nc.close().catch(() => {});
  }

  private async watchStatus(): Promise<void> {
    for await (const status of this.nc.status()) {
      this.onStatus?.({ type: String(status.type), detail: String(status.data ?? "") });
      if (status.type === Events.Reconnect) {
        for (const l of [...this.listeners])
          l.resync("the NATS connection came back; notices may have been missed");
      }
    }
  }
}
