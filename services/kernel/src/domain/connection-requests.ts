/**
 * Connection requests as the workspace stream has them: a pure fold of ConnectionRequested,
 * ConnectionAccepted and ConnectionDeclined (proto/gatehouse/v1/connections.proto). A request's id
 * is the stream revision of its ConnectionRequested; it is decided at most once.
 */
import type { StoredEvent } from "@gatehouse/event-store";
import {
  ConnectionAccepted,
  ConnectionDeclined,
  type ConnectionRequest,
  ConnectionRequested,
} from "@gatehouse/proto";

/** The states a request can be in. */
export const CONNECTION_REQUEST_STATES = ["pending", "accepted", "declined"] as const;
export type ConnectionRequestState = (typeof CONNECTION_REQUEST_STATES)[number];

/**
 * Folds one stored event into the workspace's requests (keyed by request id), returning the same
 * map when the event is about something else, else a new one.
 */
export function evolveConnectionRequests(
  requests: ReadonlyMap<number, ConnectionRequest>,
  event: StoredEvent,
  workspaceId: string,
): ReadonlyMap<number, ConnectionRequest> {
  switch (event.type) {
    case "ConnectionRequested": {
      const e = ConnectionRequested.fromJSON(event.data);
      const caller = event.metadata.caller
        ? { kind: event.metadata.caller.kind, id: event.metadata.caller.id }
        : { kind: "user", id: "" };
      return new Map(requests).set(event.revision, {
        workspaceId,
        requestId: event.revision,
        url: e.url,
        reason: e.reason,
        caller,
        requestedAt: event.metadata.occurredAt,
        state: "pending",
        binding: "",
        acceptedUrl: "",
        decidedBy: "",
        decidedAt: "",
        declineReason: "",
        gatekeeper: e.gatekeeper,
      });
    }
    case "ConnectionAccepted": {
      const e = ConnectionAccepted.fromJSON(event.data);
      const r = requests.get(e.requestId);
      if (r?.state !== "pending") return requests;
      return new Map(requests).set(e.requestId, {
        ...r,
        state: "accepted",
        binding: e.binding,
        acceptedUrl: e.url,
        decidedBy: e.decidedBy,
        decidedAt: event.metadata.occurredAt,
      });
    }
    case "ConnectionDeclined": {
      const e = ConnectionDeclined.fromJSON(event.data);
      const r = requests.get(e.requestId);
      if (r?.state !== "pending") return requests;
      return new Map(requests).set(e.requestId, {
        ...r,
        state: "declined",
        decidedBy: e.decidedBy,
        decidedAt: event.metadata.occurredAt,
        declineReason: e.reason,
      });
    }
    default:
      return requests;
  }
}

/** "accepted as FILES by user:ann at …" / "declined by user:ann at …: reason" — for refusals. */
export function describeDecision(r: ConnectionRequest): string {
  return r.state === "accepted"
    ? `accepted as ${r.binding} by ${r.decidedBy} at ${r.decidedAt}`
    : `declined by ${r.decidedBy} at ${r.decidedAt}${r.declineReason ? `: ${r.declineReason}` : ""}`;
}
