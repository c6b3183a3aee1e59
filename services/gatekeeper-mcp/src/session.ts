/**
 * OpenSession: one capnweb session per gRPC bidi stream. The first client message must be
 * `open` {workspaceId, binding, url, trust, callerToken, executionId}; every later message is one
 * capnweb frame. The session's main object is the binding target (one method per permitted tool
 * plus getActionResult). Errors sent to the caller over capnweb are redacted to domain messages.
 */

import type { SessionClientMessage, SessionOpen, SessionServerMessage } from "@gatehouse/proto";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import { RpcSession } from "capnweb";
import type { Logger } from "pino";
import type { ApprovalQueue } from "./approval-client.ts";
import { BindingService } from "./binding-service.ts";
import { createBindingTarget } from "./binding-target.ts";
import { loadCatalog } from "./catalog.ts";
import type { ConnectionPool } from "./connections.ts";
import { GatekeeperError, InvalidRequest } from "./errors.ts";
import { FrameTransport } from "./frame-transport.ts";
import { toServiceError } from "./grpc-status.ts";
import type { RegistryConfig } from "./registry.ts";
import { BINDING_NAME, type ResolvedResource, resolveResourceUrl } from "./resource-url.ts";

/** What a session needs from the service. */
export interface SessionDeps {
  registry: RegistryConfig;
  pool: ConnectionPool;
  approval: ApprovalQueue;
  logger: Logger;
  onSessionChange?: (delta: 1 | -1) => void;
}

/**
 * Checks the open message and resolves its resource. The trust used is the registry's verdict;
 * a caller claiming "vetted" for a byo resource is refused.
 * @throws InvalidRequest naming the field; the errors of `resolveResourceUrl`.
 */
export function checkOpen(open: SessionOpen, registry: RegistryConfig): ResolvedResource {
  for (const field of ["workspaceId", "binding", "url", "callerToken", "executionId"] as const) {
    if (!open[field])
      throw new InvalidRequest(`open.${field} is empty; the kernel must set it when opening a session`);
  }
  if (!BINDING_NAME.test(open.binding)) {
    throw new InvalidRequest(`open.binding "${open.binding}" must match /^[A-Z][A-Z0-9_]*$/`);
  }
  if (open.trust !== "" && open.trust !== "vetted" && open.trust !== "byo") {
    throw new InvalidRequest(`open.trust "${open.trust}" must be "vetted", "byo" or empty`);
  }
  const resource = resolveResourceUrl(open.url, registry);
  if (open.trust === "vetted" && resource.trust !== "vetted") {
    throw new InvalidRequest(
      `open.trust is "vetted" but ${resource.normalizedUrl} is not a vetted registry entry`,
    );
  }
  if (open.trust === "byo" && resource.trust === "vetted") return { ...resource, trust: "byo" };
  return resource;
}

/** Redacts errors crossing capnweb: domain errors keep their message; anything else is generic. */
function redact(err: Error): Error {
  if (err instanceof GatekeeperError) {
    const e = new Error(err.message);
    e.name = err.name;
    return e;
  }
  // capnweb's own dispatch errors name only the method path the caller sent: turn them into a
  // clear "not on this binding" message.
  const m = /^'([^']{1,200})' is not a function\.$/.exec(err.message);
  if (err instanceof TypeError && m) {
    const e = new Error(
      `'${m[1]}' is not a method of this binding; call one of its permitted tools or getActionResult (see the binding's .d.ts)`,
    );
    e.name = "NoSuchMethod";
    return e;
  }
  const e = new Error("internal gatekeeper error; the call was not completed");
  e.name = "InternalError";
  return e;
}

/** The gRPC handler of `Gatekeeper.OpenSession`. */
export function handleOpenSession(
  call: ServerDuplexStream<SessionClientMessage, SessionServerMessage>,
  deps: SessionDeps,
): void {
  const log = deps.logger.child({ component: "session" });
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
          { event: "session.open_failed", error: err instanceof GatekeeperError ? err.name : "internal" },
          "open failed",
        );
        finish(err);
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
    const resource = checkOpen(open, deps.registry);
    const catalog = await loadCatalog(deps.pool, resource);
    if (ended) return;
    const ctx = {
      workspaceId: open.workspaceId,
      binding: open.binding,
      executionId: open.executionId,
      callerToken: open.callerToken,
      resource,
    };
    const service = new BindingService(ctx, catalog, deps.pool, deps.approval, deps.logger);
    new RpcSession(t, createBindingTarget(service, catalog), { onSendError: redact });
    deps.onSessionChange?.(1);
    call.once("close", () => deps.onSessionChange?.(-1));
    log.info(
      {
        event: "session.opened",
        binding: open.binding,
        workspaceId: open.workspaceId,
        tools: catalog.tools.size,
      },
      "session open",
    );
  }
}
