/**
 * The caller side of `Gatekeeper.OpenSession` (what the kernel does, and what tests do): send
 * `open`, then carry capnweb frames both ways over the stream, and hand back the remote main
 * object as a capnweb stub.
 */
import type { SessionClientMessage, SessionOpen, SessionServerMessage } from "@gatehouse/proto";
import type { ClientDuplexStream, ServiceError } from "@grpc/grpc-js";
import { type RpcCompatible, RpcSession, type RpcStub } from "capnweb";
import { FrameTransport } from "./frame-transport.ts";

/** An open client session. */
export interface ClientSession<T extends RpcCompatible<T>> {
  /** The gatekeeper's main object. Calls reject once the stream ended or failed. */
  stub: RpcStub<T>;
  /** gRPC errors the stream ended with (e.g. INVALID_ARGUMENT for a refused open), in order. */
  errors: ServiceError[];
  /** Ends the stream (half-close, then cancel). Idempotent. */
  close(): void;
}

/**
 * Opens a session on `stream` (from `GatekeeperClient.openSession()`), sending `open` first.
 * `T` is the main object's interface (e.g. the class of the gatekeeper's RpcTarget).
 * Never throws: a refused open shows up as rejected calls and an entry in `errors`.
 */
export function connectSession<T extends RpcCompatible<T>>(
  stream: ClientDuplexStream<SessionClientMessage, SessionServerMessage>,
  open: SessionOpen,
): ClientSession<T> {
  const errors: ServiceError[] = [];
  const transport = new FrameTransport({
    onSend: (frame) => stream.write({ msg: { $case: "frame", frame } }),
    onAbort: () => stream.end(),
  });
  stream.on("data", (m: SessionServerMessage) => transport.push(m.frame));
  stream.on("end", () => transport.close());
  stream.on("error", (e: ServiceError) => {
    errors.push(e);
    transport.close(new Error(e.details || e.message));
  });
  stream.write({ msg: { $case: "open", open } });
  const session = new RpcSession<T>(transport);
  let closed = false;
  return {
    stub: session.getRemoteMain(),
    errors,
    close() {
      if (closed) return;
      closed = true;
      stream.end();
      stream.cancel();
    },
  };
}
