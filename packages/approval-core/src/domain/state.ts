/**
 * The approval projection of one workspace stream: `initialState()` and `evolve(state, event)`.
 * The action log is `events.reduce(evolve, initialState())`, so a replay and the live view fold the
 * same function and cannot disagree (the event-sourced domain as a decider).
 *
 * Log ids are stream revisions: an observation's id is the revision of its ObservationRecorded,
 * an action's id the revision of its ActionSubmitted, a refused write's id the revision of its
 * ActionRefused (docs/architecture.md "Events: the source of truth").
 */
import {
  type ActionDescription,
  ActionStatus,
  type BindingActionKind,
  type Caller,
  type ObservationDescription,
} from "@gatehouse/proto";
import { decodeEvent } from "./events.ts";

/** A binding the workspace knows, from ResourceIntroduced (appended by the kernel). */
export interface BindingInfo {
  binding: string;
  url: string;
  /** Gatekeeper kind, e.g. "mcp". */
  gatekeeper: string;
  trust: string;
  /**
   * The action kinds its gatekeeper published at introduction; undefined when the
   * ResourceIntroduced predates published action kinds (then no rule can be enabled on it).
   */
  actionKinds: BindingActionKind[] | undefined;
  /**
   * The grant's identity: the stream revision of the ResourceIntroduced that introduced it. A
   * binding removed and introduced again under the same name is a new grant (a new revision).
   */
  grant: number;
}

/** One action as folded from the stream. */
export interface ActionState {
  id: number;
  binding: string;
  /** The grant of `binding` the action was submitted under (BindingInfo.grant then; 0 if unknown). */
  grant: number;
  localId: string;
  description: ActionDescription | undefined;
  dependsOn: number[];
  payloadJson: string;
  executionId: string;
  caller: Caller | undefined;
  submittedAt: string;
  status: ActionStatus;
  decidedBy: string;
  decidedAt: string;
  reason: string;
  cascadedFrom: number;
  resultJson: string;
  outcomeUnknown: boolean;
  /** Instance id holding the apply claim (ActionApplying.claimedBy), "" when none. */
  claimedBy: string;
  /** The latest action staged to revert this one (ActionReverted.revertActionId), 0 when none. */
  revertActionId: number;
  lastRevision: number;
  /** The description digest the approval was bound to (ActionApproved.description_digest), "" when none. */
  approvedDigest?: string;
  /** Who withdrew its last approval (ActionApprovalWithdrawn.withdrawn_by), "" when none since. */
  withdrawnBy?: string;
  /** `descriptionDigest` of this action, computed on first use (the description never changes). */
  digest?: string;
}

/** A write refused at submission (ActionRefused): nothing was staged, it has no status. */
export interface RefusalState {
  id: number;
  binding: string;
  localId: string;
  description: ActionDescription | undefined;
  reason: string;
  executionId: string;
  caller: Caller | undefined;
  refusedAt: string;
}

/** One observation as folded from the stream. */
export interface ObservationState {
  id: number;
  binding: string;
  /** The grant of `binding` the read was made under (BindingInfo.grant then; 0 if unknown). */
  grant: number;
  description: ObservationDescription | undefined;
  executionId: string;
  caller: Caller | undefined;
  recordedAt: string;
}

/** The folded state of one workspace stream. */
export interface WorkspaceState {
  /** Empty until WorkspaceCreated is folded. */
  workspaceId: string;
  exists: boolean;
  /** Revision of the last event folded; -1 before any. */
  revision: number;
  bindings: Map<string, BindingInfo>;
  /** Every grant ever introduced, current or removed, by grant id (ActionState.grant). */
  grants: Map<number, BindingInfo>;
  /** Actions by id; Map insertion order is submission order. */
  actions: Map<number, ActionState>;
  observations: Map<number, ObservationState>;
  /** Refused writes by id (never pending, never in `localIds`). */
  refusals: Map<number, RefusalState>;
  /** `${binding}\u0000${localId}` -> action id, for the binding's current grant only. */
  localIds: Map<string, number>;
  /** `observationRequestKey(binding, executionId, requestId)` -> observation id, for requests with an id. */
  observationRequests: Map<string, number>;
  /** Enabled auto-approval rules, keyed `${binding}\u0000${tag}`, in the order they were enabled. */
  rules: Map<string, { binding: string; actionKindTag: string }>;
  /** Bindings that read restricted data; non-empty = the workspace is latched. */
  latchedBindings: string[];
  /** Agent chats by chat id -> "user:<subject>" who started it (ChatStarted.startedBy). */
  chats: Map<string, string>;
}

/** What evolve needs from a stored event (a subset of the event-store `StoredEvent`). */
export interface FoldableEvent {
  revision: number;
  type: string;
  data: unknown;
  metadata: { occurredAt: string; caller?: { kind: string; id: string } | undefined };
}

/** A fresh, empty state (a new object every call, because evolve updates state in place). */
export function initialState(): WorkspaceState {
  return {
    workspaceId: "",
    exists: false,
    revision: -1,
    bindings: new Map(),
    grants: new Map(),
    actions: new Map(),
    observations: new Map(),
    refusals: new Map(),
    localIds: new Map(),
    observationRequests: new Map(),
    rules: new Map(),
    latchedBindings: [],
    chats: new Map(),
  };
}

/** Key of a (binding, local id) pair in `WorkspaceState.localIds`. */
export function localIdKey(binding: string, localId: string): string {
  return `${binding}\u0000${localId}`;
}

/** Key of an observation request in `WorkspaceState.observationRequests`. */
export function observationRequestKey(binding: string, executionId: string, requestId: string): string {
  return `${binding}\u0000${executionId}\u0000${requestId}`;
}

/** Key of a (binding, action kind tag) rule in `WorkspaceState.rules`. */
export function ruleKey(binding: string, tag: string): string {
  return `${binding}\u0000${tag}`;
}

function callerOf(meta: FoldableEvent["metadata"]): Caller | undefined {
  return meta.caller ? { kind: meta.caller.kind, id: meta.caller.id } : undefined;
}

/**
 * The action with id `id`, its `lastRevision` set to `revision` (the event that changes it); undefined
 * when the state has no such action. A module function rather than a closure made per folded event:
 * replays fold every event of a stream, and the closure (with its name helper under tsx) showed in profiles.
 */
function touchAction(state: WorkspaceState, id: number, revision: number): ActionState | undefined {
  const a = state.actions.get(id);
  if (a) a.lastRevision = revision;
  return a;
}

/**
 * Folds one stored event into the state and returns it. Deterministic and free of I/O; for speed it
 * updates `state` in place, so callers keep only the returned state. Unknown event types
 * (CodeExecuted, Turn*, Hook*) only advance `revision`. Events about unknown actions are ignored.
 */
export function evolve(state: WorkspaceState, stored: FoldableEvent): WorkspaceState {
  state.revision = stored.revision;
  const event = decodeEvent(stored.type, stored.data);
  if (!event) return state;
  const at = stored.metadata.occurredAt;
  switch (event.type) {
    case "WorkspaceCreated":
      state.exists = true;
      state.workspaceId = event.data.workspaceId;
      break;
    case "ResourceIntroduced": {
      const { binding, url, gatekeeper, trust, actionKinds } = event.data;
      const info = {
        binding,
        url,
        gatekeeper,
        trust,
        actionKinds: actionKinds?.kinds,
        grant: stored.revision,
      };
      state.bindings.set(binding, info);
      state.grants.set(info.grant, info);
      break;
    }
    case "BindingRemoved": {
      // The grant ends: its local ids and auto-approval rules do not carry over to a binding
      // introduced again under the same name (a new grant). Its records stay, attributed to it.
      const prefix = localIdKey(event.data.binding, "");
      state.bindings.delete(event.data.binding);
      for (const key of [...state.localIds.keys()]) if (key.startsWith(prefix)) state.localIds.delete(key);
      for (const [key, r] of [...state.rules]) if (r.binding === event.data.binding) state.rules.delete(key);
      break;
    }
    case "ObservationRecorded":
      state.observations.set(stored.revision, {
        id: stored.revision,
        binding: event.data.binding,
        grant: state.bindings.get(event.data.binding)?.grant ?? 0,
        description: event.data.description,
        executionId: event.data.executionId,
        caller: callerOf(stored.metadata),
        recordedAt: at,
      });
      if (event.data.requestId) {
        const key = observationRequestKey(event.data.binding, event.data.executionId, event.data.requestId);
        state.observationRequests.set(key, stored.revision);
      }
      break;
    case "ChatStarted":
      // The first start of a chat id is who started it; a later one with the same id changes nothing.
      if (event.data.chatId && !state.chats.has(event.data.chatId))
        state.chats.set(event.data.chatId, event.data.startedBy);
      break;
    case "RestrictedDataLatched":
      if (!state.latchedBindings.includes(event.data.binding)) state.latchedBindings.push(event.data.binding);
      break;
    case "AutoApprovalRuleSet": {
      const key = ruleKey(event.data.binding, event.data.actionKindTag);
      if (event.data.enabled)
        state.rules.set(key, { binding: event.data.binding, actionKindTag: event.data.actionKindTag });
      else state.rules.delete(key);
      break;
    }
    case "ActionSubmitted": {
      const d = event.data;
      state.actions.set(stored.revision, {
        id: stored.revision,
        binding: d.binding,
        grant: state.bindings.get(d.binding)?.grant ?? 0,
        localId: d.localId,
        description: d.description,
        dependsOn: [...d.dependsOn],
        payloadJson: d.payloadJson,
        executionId: d.executionId,
        caller: callerOf(stored.metadata),
        submittedAt: at,
        status: ActionStatus.ACTION_STATUS_PENDING,
        decidedBy: "",
        decidedAt: "",
        reason: "",
        cascadedFrom: 0,
        resultJson: "",
        outcomeUnknown: false,
        claimedBy: "",
        revertActionId: 0,
        lastRevision: stored.revision,
      });
      state.localIds.set(localIdKey(d.binding, d.localId), stored.revision);
      break;
    }
    case "ActionRefused": {
      const d = event.data;
      state.refusals.set(stored.revision, {
        id: stored.revision,
        binding: d.binding,
        localId: d.localId,
        description: d.description,
        reason: d.reason,
        executionId: d.executionId,
        caller: callerOf(stored.metadata),
        refusedAt: at,
      });
      break;
    }
    case "ActionReverted": {
      // The original record does not change (the revert is its own action): no touchAction().
      const a = state.actions.get(event.data.actionId);
      if (a) a.revertActionId = event.data.revertActionId;
      break;
    }
    case "ActionApproved": {
      const a = touchAction(state, event.data.actionId, stored.revision);
      if (a) {
        a.status = ActionStatus.ACTION_STATUS_APPROVED;
        a.decidedBy = event.data.decidedBy;
        a.decidedAt = at;
        a.approvedDigest = event.data.descriptionDigest;
        a.withdrawnBy = "";
      }
      break;
    }
    case "ActionApprovalWithdrawn": {
      // Only an approval not yet claimed is withdrawn (the decider refuses others): pending again.
      const a = touchAction(state, event.data.actionId, stored.revision);
      if (a && a.status === ActionStatus.ACTION_STATUS_APPROVED) {
        a.status = ActionStatus.ACTION_STATUS_PENDING;
        a.decidedBy = "";
        a.decidedAt = "";
        a.approvedDigest = "";
        a.withdrawnBy = event.data.withdrawnBy;
      }
      break;
    }
    case "ActionRejected": {
      const a = touchAction(state, event.data.actionId, stored.revision);
      if (a) {
        a.status = ActionStatus.ACTION_STATUS_REJECTED;
        a.decidedBy = event.data.decidedBy;
        a.decidedAt = at;
        a.reason = event.data.reason;
        a.cascadedFrom = event.data.cascadedFrom;
      }
      break;
    }
    case "ActionApplying": {
      const a = touchAction(state, event.data.actionId, stored.revision);
      if (a) {
        a.status = ActionStatus.ACTION_STATUS_APPLYING;
        a.claimedBy = event.data.claimedBy;
      }
      break;
    }
    case "ActionClaimReleased": {
      // The claim was handed back unsent: approved again, claimable by a later run.
      const a = touchAction(state, event.data.actionId, stored.revision);
      if (a && a.status === ActionStatus.ACTION_STATUS_APPLYING) {
        a.status = ActionStatus.ACTION_STATUS_APPROVED;
        a.claimedBy = "";
      }
      break;
    }
    case "ActionApplied": {
      const a = touchAction(state, event.data.actionId, stored.revision);
      if (a) {
        a.status = ActionStatus.ACTION_STATUS_APPLIED;
        a.resultJson = event.data.resultJson;
      }
      break;
    }
    case "ActionApplyFailed": {
      const a = touchAction(state, event.data.actionId, stored.revision);
      if (a) {
        a.status = ActionStatus.ACTION_STATUS_FAILED;
        a.reason = event.data.message;
        a.outcomeUnknown = event.data.outcomeUnknown;
      }
      break;
    }
  }
  return state;
}

/** Folds `events` from a fresh state: the projection as of the last event given. */
export function foldEvents(events: Iterable<FoldableEvent>): WorkspaceState {
  let state = initialState();
  for (const e of events) state = evolve(state, e);
  return state;
}
