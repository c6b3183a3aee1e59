/** Helpers for the decider tables: build stored events and actions without any I/O, and run tables. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ActionDescription, BindingActionKind } from "@gatehouse/proto";
import {
  type Command,
  type DomainEvent,
  decide,
  encodeEventData,
  type FoldableEvent,
  foldEvents,
  type WorkspaceState,
} from "../src/domain/index.ts";

type Ev = DomainEvent | { type: "CodeExecuted"; data: unknown };

/** One row of a decider table: given these stored events, when this command, then these events or this error. */
export interface DeciderRow {
  name: string;
  given: Ev[];
  when: Command;
  expect?: Ev[];
  error?: { type: new (...args: never[]) => Error; message?: RegExp };
  /** With `error`: the events the refusal carries to record (ApprovalError.recorded); default none. */
  recorded?: Ev[];
}

/** Registers one node:test per row (call inside a describe): `decide(when, given(...))` must equal `expect`, or throw `error` carrying `recorded`. */
export function runDeciderTable(rows: readonly DeciderRow[]): void {
  for (const row of rows) {
    test(row.name, () => {
      const state = given(row.given);
      const error = row.error;
      if (error) {
        assert.throws(
          () => decide(row.when, state),
          (err: Error) => {
            assert.ok(
              err instanceof error.type,
              `expected ${error.type.name}, got ${err.name}: ${err.message}`,
            );
            if (error.message) assert.match(err.message, error.message);
            const recorded = (err as { recorded?: Array<{ type: string; data: unknown }> }).recorded ?? [];
            assert.deepEqual(
              recorded.map((e) => ({ type: e.type, data: e.data })),
              row.recorded ?? [],
            );
            return true;
          },
        );
      } else {
        assert.deepEqual(
          decide(row.when, state).map((e) => ({ type: e.type, data: e.data })),
          row.expect,
        );
      }
    });
  }
}

/** Folds `events` as stream revisions 0..n-1 (each data round-tripped through its stored JSON). */
export function given(events: Ev[]): WorkspaceState {
  return foldEvents(events.map((e, revision) => stored(e, revision)));
}

export function stored(e: Ev, revision: number): FoldableEvent {
  const data = e.type === "CodeExecuted" ? e.data : encodeEventData(e as DomainEvent);
  return {
    revision,
    type: e.type,
    data,
    metadata: {
      occurredAt: `2026-01-01T00:00:${String(revision).padStart(2, "0")}Z`,
      caller: { kind: "agent", id: "chat1" },
    },
  };
}

export const created: Ev = { type: "WorkspaceCreated", data: { workspaceId: "w1", name: "W", owner: "" } };
/**
 * ResourceIntroduced of `name`; `kinds` are the action kinds its gatekeeper published (undefined:
 * introduced before gatekeepers published them).
 */
export function binding(name: string, kinds?: BindingActionKind[]): Ev {
  return {
    type: "ResourceIntroduced",
    data: {
      binding: name,
      url: `mcp+stdio://${name}`,
      gatekeeper: "mcp",
      trust: "vetted",
      dts: "",
      methods: [],
      actionKinds: kinds && { kinds },
    },
  };
}

/** A published action kind; `why` set makes it one no rule may approve. */
export function kind(tag: string, why = ""): BindingActionKind {
  return { tag, label: tag, autoApprovable: why === "", notAutoApprovableReason: why };
}

export function desc(over: Partial<ActionDescription> = {}): ActionDescription {
  return {
    title: "Call create_entities",
    description: "```\n{}\n```",
    descriptionIsComplete: true,
    delivery: 1,
    dependsOn: [],
    implementsRevert: 0,
    autoApprovable: false,
    actionKind: undefined,
    classifiedBy: "test",
    egress: false,
    summary: "",
    fields: [],
    risks: [],
    preflightWarnings: [],
    preview: "",
    ...over,
  };
}

/** An auto-approvable description with action kind `tag`. */
export function autoDesc(tag: string, over: Partial<ActionDescription> = {}): ActionDescription {
  return desc({ autoApprovable: true, actionKind: { tag, label: tag }, ...over });
}

export function submitted(b: string, localId: string, dependsOn: number[] = [], d = desc()): Ev {
  return {
    type: "ActionSubmitted",
    data: { binding: b, localId, description: d, dependsOn, payloadJson: "{}", executionId: "x1" },
  };
}
export const approved = (actionId: number, decidedBy = "user:alice", descriptionDigest = ""): Ev => ({
  type: "ActionApproved",
  data: { actionId, decidedBy, descriptionDigest },
});
export const rejected = (
  actionId: number,
  decidedBy = "user:alice",
  reason = "no",
  cascadedFrom = 0,
): Ev => ({
  type: "ActionRejected",
  data: { actionId, decidedBy, reason, cascadedFrom },
});
export const applying = (actionId: number, claimedBy = "i1"): Ev => ({
  type: "ActionApplying",
  data: { actionId, claimedBy },
});
export const applied = (actionId: number): Ev => ({
  type: "ActionApplied",
  data: { actionId, resultJson: "{}" },
});
export const failed = (actionId: number, outcomeUnknown = false): Ev => ({
  type: "ActionApplyFailed",
  data: { actionId, message: "boom", outcomeUnknown },
});
export const rule = (b: string, tag: string, enabled = true): Ev => ({
  type: "AutoApprovalRuleSet",
  data: { binding: b, actionKindTag: tag, enabled, setBy: "user:alice" },
});
export const observed = (b: string, restricted = false, requestId = "", page = 0): Ev => ({
  type: "ObservationRecorded",
  data: {
    binding: b,
    description: {
      title: "read",
      description: "",
      containsRestrictedData: restricted,
      kind: "mcp.tool.read",
      page,
    },
    executionId: "x1",
    requestId,
  },
});
export const latched = (observationId: number, b: string): Ev => ({
  type: "RestrictedDataLatched",
  data: { observationId, binding: b },
});
export const refused = (b: string, localId: string, reason: string, d = desc(), executionId = "x1"): Ev => ({
  type: "ActionRefused",
  data: { binding: b, localId, description: d, reason, executionId },
});
export const reverted = (actionId: number, revertActionId: number, requestedBy = "user:alice"): Ev => ({
  type: "ActionReverted",
  data: { actionId, revertActionId, requestedBy },
});
export const removed = (b: string, grant: number, removedBy = "user:owner", reason = ""): Ev => ({
  type: "BindingRemoved",
  data: { binding: b, removedBy, reason, grant },
});
