/**
 * The kernel's view of a workspace: a pure fold over its stream (`workspace-<id>`). The kernel
 * needs the workspace's identity, its owner and members, and its bindings; the approval service
 * owns the action log.
 */
import type { StoredEvent } from "@gatehouse/event-store";
import {
  type BindingActionKinds,
  BindingRemoved,
  type ConnectionRequest,
  MemberAdded,
  MemberRemoved,
  ResourceIntroduced,
  WorkspaceCreated,
} from "@gatehouse/proto";
import { evolveConnectionRequests } from "./connection-requests.ts";

/** One binding: what `env.<name>` is in executions of this workspace. */
export interface BindingState {
  name: string;
  url: string;
  gatekeeper: string;
  trust: string;
  dts: string;
  /** Method names the binding exposes, as the gatekeeper resolved them at introduction. */
  methods: string[];
  /** Its action kinds as the gatekeeper published them; undefined for a binding introduced before that. */
  actionKinds?: BindingActionKinds | undefined;
  /**
   * The grant's identity: the stream revision of its ResourceIntroduced. A binding removed and
   * introduced again under the same name is a new grant.
   */
  grant: number;
}

export interface WorkspaceState {
  id: string;
  name: string;
  /** "user:<subject>" of its owner; "" when nobody owns it (created before owners, or with none named). */
  owner: string;
  /** "user:<subject>" of each member, in the order they were added (never the owner). */
  members: string[];
  bindings: Map<string, BindingState>;
  /** Connection requests by request id (connection-requests.ts). */
  connectionRequests: ReadonlyMap<number, ConnectionRequest>;
  /** Revision of the last event folded in; -1 for none. */
  revision: number;
}

/** Stream id of a workspace. */
export function streamOf(workspaceId: string): string {
  return `workspace-${workspaceId}`;
}

/** Folds one stored event into the state. Unknown event types are ignored (other services own them). */
export function evolveWorkspace(state: WorkspaceState, event: StoredEvent): WorkspaceState {
  const next = { ...state, revision: event.revision };
  switch (event.type) {
    case "WorkspaceCreated": {
      const e = WorkspaceCreated.fromJSON(event.data);
      return { ...next, id: e.workspaceId, name: e.name, owner: e.owner };
    }
    case "MemberAdded": {
      const e = MemberAdded.fromJSON(event.data);
      if (e.member === state.owner || state.members.includes(e.member)) return next;
      return { ...next, members: [...state.members, e.member] };
    }
    case "MemberRemoved": {
      const e = MemberRemoved.fromJSON(event.data);
      return { ...next, members: state.members.filter((m) => m !== e.member) };
    }
    case "ResourceIntroduced": {
      const e = ResourceIntroduced.fromJSON(event.data);
      const bindings = new Map(state.bindings);
      bindings.set(e.binding, {
        name: e.binding,
        url: e.url,
        gatekeeper: e.gatekeeper,
        trust: e.trust,
        dts: e.dts,
        methods: e.methods,
        actionKinds: e.actionKinds,
        grant: event.revision,
      });
      return { ...next, bindings };
    }
    case "BindingRemoved": {
      const e = BindingRemoved.fromJSON(event.data);
      const bindings = new Map(state.bindings);
      bindings.delete(e.binding);
      return { ...next, bindings };
    }
    default:
      return {
        ...next,
        connectionRequests: evolveConnectionRequests(state.connectionRequests, event, state.id),
      };
  }
}

/** Folds a whole stream. */
export function foldWorkspace(events: StoredEvent[]): WorkspaceState {
  return events.reduce(evolveWorkspace, emptyWorkspace());
}

/** The state before any event. */
export function emptyWorkspace(): WorkspaceState {
  return {
    id: "",
    name: "",
    owner: "",
    members: [],
    bindings: new Map(),
    connectionRequests: new Map(),
    revision: -1,
  };
}
