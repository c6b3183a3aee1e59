/** The notice bus port and its in-process implementation (what `gatehouse dev` uses). */
import type { ChatDelta, LogNotice } from "@gatehouse/gateway-contract";
import { chatDeltaSubject, logSubject } from "./subjects.ts";

/** What a subscriber is told. */
export interface NoticeListener {
  /** A workspace's stream changed at `revision`. */
  notice(notice: LogNotice): void;
  /**
   * Notices may have been missed (the bus connection dropped and came back): re-read every
   * projection the subscriber shows. `reason` is a sentence for logs and clients.
   */
  resync(reason: string): void;
  /**
   * Optional: the built-in agent's model text as it streams (`gatehouse.ws.<id>.chat-delta`). Deltas
   * are never stored and may be lost; the step's `ChatModelMessage` notice carries the whole text.
   */
  chatDelta?(delta: ChatDelta): void;
}

/**
 * Fan-out of log notices. Best effort by design: a notice says "re-read", it carries no state, and
 * a subscriber that might have missed some is told to resync. Implementations: {@link InProcessNoticeBus},
 * the NATS bus (`connectNatsNoticeBus`).
 */
export interface NoticeBus {
  /** Sends one notice on `gatehouse.ws.<workspaceId>.log`. Never throws for a lost connection (notices are best effort). @throws InvalidSubjectToken for a workspace id that cannot be a subject token. */
  publish(notice: LogNotice): void;
  /**
   * Sends one model-text delta on `gatehouse.ws.<workspaceId>.chat-delta`. Best effort like notices,
   * never stored. @throws InvalidSubjectToken for a workspace id that cannot be a subject token.
   */
  publishChatDelta(delta: ChatDelta): void;
  /** Registers a listener for every workspace's notices (and deltas); returns the function that unregisters it. */
  subscribe(listener: NoticeListener): () => void;
  /** Stops delivery and releases the connection. Idempotent. */
  close(): Promise<void>;
}

/** A bus inside one process (no network): every publish reaches every listener synchronously, in order. */
export class InProcessNoticeBus implements NoticeBus {
  private readonly listeners = new Set<NoticeListener>();

  /** See {@link NoticeBus.publish}. A listener that throws does not stop delivery to the others. */
  publish(notice: LogNotice): void {
    logSubject(notice.workspaceId);
    for (const l of [...this.listeners]) {
      try {
        l.notice(notice);
      } catch {
        // a listener's failure is its own; the bus goes on
      }
    }
  }

  /** See {@link NoticeBus.publishChatDelta}. A listener that throws does not stop delivery to the others. */
  publishChatDelta(delta: ChatDelta): void {
    chatDeltaSubject(delta.workspaceId);
    for (const l of [...this.listeners]) {
      try {
        l.chatDelta?.(delta);
      } catch {
        // a listener's failure is its own; the bus goes on
      }
    }
  }

  /** See {@link NoticeBus.subscribe}. */
  subscribe(listener: NoticeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** See {@link NoticeBus.close}. */
  async close(): Promise<void> {
    this.listeners.clear();
  }
}
