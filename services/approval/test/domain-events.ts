/** Builds folded workspace states from event tables, without any I/O (for the planner tests). */
import { type DomainEvent, encodeEventData, foldEvents, type WorkspaceState } from "@gatehouse/approval-core";
import type { ActionDescription } from "@gatehouse/proto";

/** Folds `events` as stream revisions 0..n-1 (each data round-tripped through its stored JSON). */
export function given(events: DomainEvent[]): WorkspaceState {
  return foldEvents(
    events.map((e, revision) => ({
      revision,
      type: e.type,
      data: encodeEventData(e),
      metadata: { occurredAt: "2026-01-01T00:00:00Z" },
    })),
  );
}

export const created: DomainEvent = {
  type: "WorkspaceCreated",
  data: { workspaceId: "w1", name: "W", owner: "" },
};

export function binding(name: string): DomainEvent {
  return {
    type: "ResourceIntroduced",
    data: {
      binding: name,
      url: `mcp+stdio://${name}`,
      gatekeeper: "mcp",
      trust: "vetted",
      dts: "",
      methods: [],
      actionKinds: undefined,
    },
  };
}

function desc(auto?: string): ActionDescription {
  return {
    title: "Call create_entities",
    description: "",
    descriptionIsComplete: true,
    delivery: 1,
    dependsOn: [],
    implementsRevert: 0,
    autoApprovable: auto !== undefined,
    actionKind: auto ? { tag: auto, label: auto } : undefined,
    classifiedBy: "test",
    egress: false,
    summary: "",
    fields: [],
    risks: [],
    preflightWarnings: [],
    preview: "",
  };
}

/** ActionSubmitted through `b`; `auto` = an auto-approvable action of that kind tag. */
export function submitted(
  b: string,
  localId: string,
  options: { dependsOn?: number[]; auto?: string } = {},
): DomainEvent {
  return {
    type: "ActionSubmitted",
    data: {
      binding: b,
      localId,
      description: desc(options.auto),
      dependsOn: options.dependsOn ?? [],
      payloadJson: "{}",
      executionId: "x1",
    },
  };
}

export const approved = (actionId: number, decidedBy = "user:alice"): DomainEvent => ({
  type: "ActionApproved",
  data: { actionId, decidedBy, descriptionDigest: "" },
});

export const rejected = (actionId: number, decidedBy = "user:alice"): DomainEvent => ({
  type: "ActionRejected",
  data: { actionId, decidedBy, reason: "no", cascadedFrom: 0 },
});

export const rule = (b: string, tag: string, enabled = true): DomainEvent => ({
  type: "AutoApprovalRuleSet",
  data: { binding: b, actionKindTag: tag, enabled, setBy: "user:alice" },
});

export const latched = (observationId: number, b: string): DomainEvent => ({
  type: "RestrictedDataLatched",
  data: { observationId, binding: b },
});
