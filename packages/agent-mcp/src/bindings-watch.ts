/**
 * Follows Kernel.WatchBindings for one workspace and calls `onChange` for each binding introduced
 * or removed after a given revision. A stream that fails (kernel restarted, connection lost) is
 * opened again from the last revision seen, after 1 s doubling up to 30 s, so no change is missed;
 * NOT_FOUND (the workspace is gone) stops the watch.
 */
import type { BindingsChanged, KernelClient } from "@gatehouse/proto";
import { type ClientReadableStream, status } from "@grpc/grpc-js";
import type { AgentMcpLogger } from "./options.ts";

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

/** A running watch; `close()` cancels the stream and any pending retry. */
export class BindingsWatch {
  private stream: ClientReadableStream<BindingsChanged> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private retryMs = FIRST_RETRY_MS;
  private closed = false;
  private after = 0;

  constructor(
    private readonly kernel: KernelClient,
    private readonly workspaceId: string,
    private readonly onChange: (change: BindingsChanged) => void,
    private readonly logger: AgentMcpLogger,
  ) {}

  /** Starts streaming changes after `afterRevision` (DescribeBindingsResponse.revision). */
  start(afterRevision: number): void {
    this.after = afterRevision;
    this.open();
  }

  private open(): void {
    if (this.closed) return;
    const stream = this.kernel.watchBindings({ workspaceId: this.workspaceId, afterRevision: this.after });
    this.stream = stream;
    stream.on("data", (change: BindingsChanged) => {
      this.retryMs = FIRST_RETRY_MS;
      if (change.revision <= this.after) return;
      this.after = change.revision;
      this.onChange(change);
    });
    const fail = (err: Error & { code?: number }) => {
      // Our own cancel (close()) sets `closed` first; any other failure, CANCELLED from a server
      // shutting down included, opens the stream again.
      if (this.closed || this.stream !== stream) return;
      this.stream = undefined;
      if (err.code === status.NOT_FOUND) {
        this.logger.warn(
          { component: "agent-mcp", event: "bindings_watch_stopped", workspaceId: this.workspaceId },
          "the workspace is gone; binding changes are no longer watched",
        );
        return;
      }
      this.logger.warn(
        { component: "agent-mcp", event: "bindings_watch_retry", code: err.code, retryMs: this.retryMs },
        "the bindings watch failed; opening it again",
      );
      this.retry = setTimeout(() => this.open(), this.retryMs).unref();
      this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    };
    stream.on("error", fail);
    // The kernel never ends the stream by itself: an end without an error is a failure too.
    stream.on("end", () =>
      fail(Object.assign(new Error("the bindings watch ended"), { code: status.UNAVAILABLE })),
    );
  }

  /** Stops watching; idempotent. */
  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.stream?.cancel();
  }
}
