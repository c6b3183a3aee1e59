/**
 * The workspace-stream events the approval domain reads and writes, as a tagged union over the
 * generated messages of `proto/gatehouse/v1/events.proto`. In the store, `type` is the message
 * name and `data` its ts-proto JSON (`Msg.toJSON`); `decodeEvent` reads it back with `fromJSON`.
 */
import {
  ActionApplied,
  ActionApplyFailed,
  ActionApplying,
  ActionApprovalWithdrawn,
  ActionApproved,
  ActionClaimReleased,
  ActionRefused,
  ActionRejected,
  ActionReverted,
  ActionSubmitted,
  AutoApprovalRuleSet,
  BindingRemoved,
  ChatStarted,
  ObservationRecorded,
  ResourceIntroduced,
  RestrictedDataLatched,
  WorkspaceCreated,
} from "@gatehouse/proto";

/** Every event type the approval projection folds, keyed by its stored `type`. */
export const EVENT_CODECS = {
  WorkspaceCreated,
  ResourceIntroduced,
  BindingRemoved,
  ObservationRecorded,
  RestrictedDataLatched,
  ActionSubmitted,
  ActionRefused,
  ActionApproved,
  ActionApprovalWithdrawn,
  ActionRejected,
  ActionApplying,
  ActionApplied,
  ActionApplyFailed,
  ActionClaimReleased,
  ActionReverted,
  AutoApprovalRuleSet,
  ChatStarted,
} as const;

type Codecs = typeof EVENT_CODECS;
/** A stored `type` the approval domain understands. */
export type DomainEventType = keyof Codecs;
type MessageOf<K extends DomainEventType> = ReturnType<Codecs[K]["fromJSON"]>;

/** A decoded event: `{ type: "ActionApproved", data: ActionApproved }` and so on. */
export type DomainEvent = { [K in DomainEventType]: { type: K; data: MessageOf<K> } }[DomainEventType];

/**
 * An event the decider wants appended, with the actor that causes it
 * ("user:alice", "rule:<binding>/<tag>", "service:approval").
 */
export type PlannedEvent = DomainEvent & { actor: string };

/** True for stored types this domain folds; others (CodeExecuted, Turn*, Hook*) are ignored. */
export function isDomainEventType(type: string): type is DomainEventType {
  return Object.hasOwn(EVENT_CODECS, type);
}

/** Decodes stored `{type, data}` into a DomainEvent, or undefined for types this domain ignores. */
export function decodeEvent(type: string, data: unknown): DomainEvent | undefined {
  if (!isDomainEventType(type)) return undefined;
  const codec = EVENT_CODECS[type] as { fromJSON(o: unknown): unknown };
  return { type, data: codec.fromJSON(data) } as DomainEvent;
}

/** Encodes an event's message to the JSON stored as `data`. */
export function encodeEventData(event: DomainEvent): unknown {
  const codec = EVENT_CODECS[event.type] as { toJSON(m: unknown): unknown };
  return codec.toJSON(event.data);
}

/** Builds a PlannedEvent with type inference on `data`. */
export function planned<K extends DomainEventType>(type: K, data: MessageOf<K>, actor: string): PlannedEvent {
  return { type, data, actor } as PlannedEvent;
}
