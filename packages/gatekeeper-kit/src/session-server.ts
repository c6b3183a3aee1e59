/**
 * Serving `Gatekeeper.OpenSession`: one capnweb session per gRPC bidi stream. The first client
 * message must be `open`; every later message is one capnweb frame. The gatekeeper supplies the
 * session's main object (an `RpcTarget`) from the open message; the kit does the stream, frame
 * and error plumbing:
 *
 * - a first message that is not `open`, or a second `open`, ends the stream with INVALID_ARGUMENT;
 * - `start` throwing ends the stream with the error's status (`toServiceError`), nothing served —
 *   unless `methodsOnFailure` is set: then a session is served whose methods all reject with that
 *   (redacted) error, so the agent's call fails at once with the reason instead of waiting;
 * - errors that cross capnweb to the caller are redacted: a `GatekeeperError` keeps its name and
 *   message, a call to a name the main object lacks becomes `NoSuchMethod`, anything else becomes a
 *   generic `InternalError` (no paths, tokens or external data leak; the stack sent is only
 *   `<name>: <message>`). capnweb rebuilds an error whose name is not a built-in Error class as a
 *   plain `Error` on the caller's side; the sandbox's binding facade (sandbox-runner prelude.ts)
 *   puts the name back from that stack's first line, so a snippet sees `e.name`.
 *
 * ```ts
 * server.addService(GatekeeperService, {
 *   openSession: (call) => serveSession(call, { start: async (open) => new RepoTarget(open) }),
 *   ...
 * });
 * ```
 */
import type { SessionClientMessage, SessionOpen, SessionServerMessage } from "@gatehouse/proto";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import { RpcSession, RpcTarget } from "capnweb";
import { GatekeeperError, InvalidRequest } from "./errors.ts";
import { FrameTransport } from "./frame-transport.ts";
import { toServiceError } from "./grpc-status.ts";
import { type KitLogger, silentLogger } from "./logger.ts";
import { sessionTracingOf } from "./session-tracing.ts";

/** What a gatekeeper plugs into `serveSession`. */
export interface SessionHandlers {
  /**
   * Checks `open` (see `checkOpenFields`) and builds the session's main object. Throw a
   * `GatekeeperError` to refuse the session with a clear status; `isEnded()` tells a slow start
   * that the caller already went away (its result is then discarded).
   */
  start(open: SessionOpen, isEnded: () => boolean): Promise<RpcTarget>;
  /** Structured logger (pino fits); default silent. */
  logger?: KitLogger;
  /** +1 when a session is served, -1 when its stream closes (for a gauge). */
  onSessionChange?: (delta: 1 | -1) => void;
  /** Appended to "'x' is not a method of this binding; " when the caller names a missing method. */
  noSuchMethodHint?: string;
  /**
   * The binding's method names. When set and `start` throws, the session is still served with a
   * main object whose methods reject with the start error, so callers see the reason at once.
   */
  methodsOnFailure?: readonly string[];
}

/** A main object whose `methods` all throw `err` (capnweb calls prototype methods only). */
function failingTarget(methods: readonly string[], err: unknown): RpcTarget {
  class FailedSession extends RpcTarget {}
  for (const name of methods) {
    Object.defineProperty(FailedSession.prototype, name, {
      value() {
        throw err;
      },
    });
  }
  return new FailedSession();
}

const DEFAULT_HINT = "see the binding's .d.ts for the methods it has";

/**
 * Redacts an error before capnweb sends it to the caller (see module doc).
 * @returns a new plain `Error` with a safe `name` and `message`, and a stack of just
 *   `<name>: <message>` (capnweb sends a rewritten error's stack; a real one would name the
 *   gatekeeper's source paths).
 */
export function redactForCaller(err: Error, noSuchMethodHint = DEFAULT_HINT): Error {
  if (err instanceof GatekeeperError) return callerError(err.name, err.message);
  // capnweb's own dispatch errors name only the method path the caller sent.
  const m = /^'([^']{1,200})' is not a function\.$/.exec(err.message);
  if (err instanceof TypeError && m) {
    return callerError("NoSuchMethod", `'${m[1]}' is not a method of this binding; ${noSuchMethodHint}`);
  }
  return callerError("InternalError", "internal gatekeeper error; the call was not completed");
}

function callerError(name: string, message: string): Error {
  const e = new Error(message);
  e.name = name;
  e.stack = `${name}: ${message}`;
  return e;
}

/** The gRPC handler of `Gatekeeper.OpenSession` for any gatekeeper. Never throws. */
export function serveSession(
  call: ServerDuplexStream<SessionClientMessage, SessionServerMessage>,
  handlers: SessionHandlers,
): void {
  const log = handlers.logger ?? silentLogger;
  let transport: FrameTransport | null = null;
  let ended = false;
  const finish = (err?: unknown) => {
    if (ended) return;
    ended = true;
    transport?.close();
    if (err !== undefined) call.emit("error", toServiceError(err));
    else call.end();
  };

  call.on("data", (msg: SessionClientMessage) => {
    if (ended) return;
    const m = msg.msg;
    if (!transport) {
      if (m?.$case !== "open") {
        finish(
          new InvalidRequest("the first OpenSession message must be `open`; send open before any frame"),
        );
        return;
      }
      const t = new FrameTransport({
        onSend: (frame) => {
          if (!ended) call.write({ frame });
        },
        onAbort: () => finish(),
      });
      transport = t;
      void start(m.open, t).catch((err) => {
        log.warn(
          {
            component: "session",
            event: "session.open_failed",
            error: err instanceof GatekeeperError ? err.name : "internal",
          },
          "open failed",
        );
        if (handlers.methodsOnFailure && !ended) {
          serve(m.open, t, failingTarget(handlers.methodsOnFailure, err));
        } else finish(err);
      });
      return;
    }
    if (m?.$case === "frame") transport.push(m.frame);
    else
      finish(new InvalidRequest("`open` may be sent only once per session; later messages must be frames"));
  });
  call.on("end", () => {
    transport?.close();
    if (!transport) finish();
  });
  call.on("cancelled", () => {
    ended = true;
    transport?.close();
  });
  call.on("error", () => transport?.close());

  async function start(open: SessionOpen, t: FrameTransport): Promise<void> {
    const main = await handlers.start(open, () => ended);
    if (ended) return;
    serve(open, t, main);
  }

  function serve(open: SessionOpen, t: FrameTransport, main: RpcTarget): void {
    const hint = handlers.noSuchMethodHint;
    // Traced (serveGatekeeper with tracing on): each binding method call is a span "binding <method>".
    const tracing = sessionTracingOf(call);
    const target = tracing
      ? tracing.traceMethodCalls(main, "binding", {
          "gatehouse.binding": open.binding,
          "gatehouse.workspace_id": open.workspaceId,
        })
      : main;
    new RpcSession(t, target, { onSendError: (e) => redactForCaller(e, hint) });
    handlers.onSessionChange?.(1);
    call.once("close", () => handlers.onSessionChange?.(-1));
    log.info(
      { component: "session", event: "session.opened", binding: open.binding, workspaceId: open.workspaceId },
      "session open",
    );
  }
}
