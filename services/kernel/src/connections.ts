/**
 * Connection requests (proto/gatehouse/v1/connections.proto): an agent asks for a resource, a
 * person accepts (the same path as Kernel.IntroduceResource, plus ConnectionAccepted in the same
 * append) or declines. Requests are checked by their gatekeeper without connecting, so an agent's
 * URL reaches no network before a person accepts it. All state is in the workspace stream.
 */
import type { EventStore } from "@gatehouse/event-store";
import {
  type Caller,
  ConnectionAccepted,
  ConnectionDeclined,
  type ConnectionRequest,
  ConnectionRequested,
  type DecideConnectionRequestRequest,
  type RequestConnectionRequest,
  ResourceIntroduced,
} from "@gatehouse/proto";
import {
  CONNECTION_REQUEST_STATES,
  describeDecision,
  evolveConnectionRequests,
} from "./domain/connection-requests.ts";
import { BindingAlreadyExists, InvalidArgument, KernelError } from "./domain/errors.ts";
import { checkNarrowsRequest } from "./domain/scope-narrowing.ts";
import { streamOf, type WorkspaceState } from "./domain/workspace.ts";
import type { Workspaces } from "./workspaces.ts";

/** Longest URL a request may carry, characters. */
export const MAX_URL_CHARS = 2048;
/** Longest reason (the agent's, or a person's for declining), characters. */
export const MAX_REASON_CHARS = 2000;
const CALLER_KINDS = ["agent", "gadget", "user", "hook"];
const TOO_BUSY = "the workspace changed too often while recording the connection request; try again";

/** The workspace has no connection request with that id. */
export class ConnectionRequestNotFound extends KernelError {
  override name = "ConnectionRequestNotFound";
  constructor(
    readonly workspaceId: string,
    readonly requestId: number,
  ) {
    super(
      `workspace ${workspaceId} has no connection request ${requestId}; list them with \`gatehouse connections ${workspaceId}\``,
    );
  }
}

/** The request was decided already (or the URL is bound already): nothing was appended. */
export class ConnectionRequestConflict extends KernelError {
  override name = "ConnectionRequestConflict";
}

/** "user:ann" stays; "ann" becomes "user:ann" (the event's actor). */
function personActor(decidedBy: string): string {
  return decidedBy.includes(":") ? decidedBy : `user:${decidedBy}`;
}

function fragmentless(url: string): string {
  const i = url.indexOf("#");
  return i < 0 ? url : url.slice(0, i);
}

function checkCaller(caller: Caller | undefined): Caller {
  if (!caller) return { kind: "user", id: "" };
  if (!CALLER_KINDS.includes(caller.kind))
    throw new InvalidArgument(`caller.kind must be one of ${CALLER_KINDS.join(", ")} (got "${caller.kind}")`);
  return { kind: caller.kind, id: caller.id };
}

function requestIn(state: WorkspaceState, requestId: number): ConnectionRequest {
  const r = state.connectionRequests.get(requestId);
  if (!r) throw new ConnectionRequestNotFound(state.id, requestId);
  return r;
}

/**
 * Records a request after its gatekeeper checked the URL (check only, no connection). A pending
 * request of the same caller for the same URL is returned instead of recording another.
 * @throws InvalidArgument (url or reason missing/too long, bad caller), NoGatekeeperForResource,
 *   the gatekeeper's own error (bad fragment, unknown server), WorkspaceNotFound,
 *   ConnectionRequestConflict when a binding already has that URL.
 */
export async function requestConnection(
  workspaces: Workspaces,
  req: RequestConnectionRequest,
): Promise<ConnectionRequest> {
  const url = req.url.trim();
  if (!url) throw new InvalidArgument("url is required, e.g. mcp://files#tool=read_text_file");
  if (url.length > MAX_URL_CHARS)
    throw new InvalidArgument(`url is ${url.length} characters; at most ${MAX_URL_CHARS}`);
  const reason = req.reason.trim();
  if (!reason)
    throw new InvalidArgument(
      "reason is required: say why the agent needs this resource, for the person deciding",
    );
  if (reason.length > MAX_REASON_CHARS)
    throw new InvalidArgument(`reason is ${reason.length} characters; at most ${MAX_REASON_CHARS}`);
  const caller = checkCaller(req.caller);
  await workspaces.load(req.workspaceId);
  const checked = await workspaces.checkUrl(url);
  const { result, revision } = await workspaces.appendEventsAtRevision<ConnectionRequest | undefined>(
    req.workspaceId,
    "service:kernel",
    async (state) => {
      const bound = [...state.bindings.values()].find((b) => b.url === checked.url);
      if (bound)
        throw new ConnectionRequestConflict(
          `${checked.url} is already bound as ${bound.name}: use env.${bound.name} (its methods are in the binding's .d.ts)`,
        );
      const same = [...state.connectionRequests.values()].find(
        (r) =>
          r.state === "pending" &&
          r.url === checked.url &&
          r.caller?.kind === caller.kind &&
          r.caller.id === caller.id,
      );
      if (same) return { events: [], result: same };
      const event: ConnectionRequested = { url: checked.url, reason, gatekeeper: checked.gatekeeper };
      return {
        events: [{ type: "ConnectionRequested", data: ConnectionRequested.toJSON(event) }],
        result: undefined,
      };
    },
    TOO_BUSY,
    caller,
  );
  return result ?? requestIn(await workspaces.load(req.workspaceId), revision);
}

/**
 * The workspace's requests in id order; `state` "" for all.
 * @throws InvalidArgument for an unknown state, WorkspaceNotFound.
 */
export async function listConnectionRequests(
  workspaces: Workspaces,
  workspaceId: string,
  state: string,
): Promise<ConnectionRequest[]> {
  if (state && !(CONNECTION_REQUEST_STATES as readonly string[]).includes(state))
    throw new InvalidArgument(
      `state must be one of ${CONNECTION_REQUEST_STATES.join(", ")} or empty (got "${state}")`,
    );
  const ws = await workspaces.load(workspaceId);
  return [...ws.connectionRequests.values()]
    .filter((r) => !state || r.state === state)
    .sort((a, b) => a.requestId - b.requestId);
}

/**
 * The request; with a `signal`, waits until it is decided or `signal` aborts (then returns it pending).
 * @throws ConnectionRequestNotFound, WorkspaceNotFound.
 */
export async function getConnectionRequest(
  workspaces: Workspaces,
  store: EventStore,
  workspaceId: string,
  requestId: number,
  signal?: AbortSignal,
): Promise<ConnectionRequest> {
  const ws = await workspaces.load(workspaceId);
  let request = requestIn(ws, requestId);
  if (!signal || request.state !== "pending" || signal.aborted) return request;
  let requests = ws.connectionRequests;
  return new Promise<ConnectionRequest>((resolve, reject) => {
    const sub = store.subscribeToStream(streamOf(workspaceId), {
      after: ws.revision,
      onEvent: (e) => {
        requests = evolveConnectionRequests(requests, e, workspaceId);
        request = requests.get(requestId) ?? request;
        if (request.state !== "pending") done();
      },
      onError: (err) => {
        signal.removeEventListener("abort", done);
        void sub.close();
        reject(err);
      },
    });
    const done = () => {
      signal.removeEventListener("abort", done);
      void sub.close();
      resolve(request);
    };
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Accepts (introducing the resource: ResourceIntroduced + ConnectionAccepted in one append) or
 * declines (ConnectionDeclined) a pending request.
 * @throws InvalidArgument (no decided_by; decline without reason; an accepted url for another
 *   resource, or one whose scope fragment is wider than the request's (checkNarrowsRequest); bad name), ConnectionRequestNotFound, ConnectionRequestConflict (decided already,
 *   naming the decision), BindingAlreadyExists, the gatekeeper's error for the accepted URL.
 */
export async function decideConnectionRequest(
  workspaces: Workspaces,
  req: DecideConnectionRequestRequest,
): Promise<ConnectionRequest> {
  const decidedBy = req.decidedBy.trim();
  if (!decidedBy) throw new InvalidArgument('decided_by is required: "user:<id>" of the person deciding');
  const actor = personActor(decidedBy);
  const pendingIn = (state: WorkspaceState): ConnectionRequest => {
    const r = requestIn(state, req.requestId);
    if (r.state !== "pending")
      throw new ConnectionRequestConflict(
        `connection request ${r.requestId} was ${describeDecision(r)} already`,
      );
    return r;
  };
  const requested = pendingIn(await workspaces.load(req.workspaceId));
  if (!req.accept) {
    const reason = req.reason.trim();
    if (!reason)
      throw new InvalidArgument("reason is required to decline: say why, so the agent can read it");
    if (reason.length > MAX_REASON_CHARS)
      throw new InvalidArgument(`reason is ${reason.length} characters; at most ${MAX_REASON_CHARS}`);
    const event: ConnectionDeclined = { requestId: requested.requestId, decidedBy, reason };
    await workspaces.appendEventsAtRevision(
      req.workspaceId,
      actor,
      async (state) => {
        pendingIn(state);
        return {
          events: [{ type: "ConnectionDeclined", data: ConnectionDeclined.toJSON(event) }],
          result: undefined,
        };
      },
      TOO_BUSY,
    );
    return requestIn(await workspaces.load(req.workspaceId), requested.requestId);
  }
  const url = req.url.trim() || requested.url;
  if (fragmentless(url) !== fragmentless(requested.url))
    throw new InvalidArgument(
      `url must be the requested resource ${fragmentless(requested.url)} with a scope fragment of your choice (got ${fragmentless(url)}); only the part after # may change`,
    );
  checkNarrowsRequest(requested.url, url); // before anything is resolved or started
  const introduced = await workspaces.prepareIntroduction(url, req.name);
  checkNarrowsRequest(requested.url, introduced.url); // and as the gatekeeper normalized it
  const accepted: ConnectionAccepted = {
    requestId: requested.requestId,
    binding: introduced.binding,
    url: introduced.url,
    decidedBy,
  };
  await workspaces.appendEventsAtRevision(
    req.workspaceId,
    actor,
    async (state) => {
      pendingIn(state);
      if (state.bindings.has(introduced.binding)) throw new BindingAlreadyExists(introduced.binding);
      return {
        events: [
          { type: "ResourceIntroduced", data: ResourceIntroduced.toJSON(introduced) },
          { type: "ConnectionAccepted", data: ConnectionAccepted.toJSON(accepted) },
        ],
        result: undefined,
      };
    },
    TOO_BUSY,
  );
  return requestIn(await workspaces.load(req.workspaceId), requested.requestId);
}
