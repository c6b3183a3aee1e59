/**
 * PrepareRevert for PostgreSQL: stages the inverse of an applied write as a new action (the
 * approval service submits it; a person approves it like any other). It carries the before- and
 * after-images the apply captured in its transaction; applying it restores the before-images only
 * where rows still hold the after-images (revert-apply.ts). Nothing is written here.
 *
 * Refused (FAILED_PRECONDITION) when the apply captured no images: DDL, a table without a primary
 * key, an UPDATE of a key column, INSERT … ON CONFLICT, or images over MAX_RESULT_BYTES.
 */
import { oneLine } from "@gatehouse/gatekeeper-kit";
import { Delivery, type PrepareRevertRequest, type PrepareRevertResponse } from "@gatehouse/proto";
import { parsePayload } from "./apply.ts";
import { openResource } from "./binding.ts";
import { NotRevertable } from "./errors.ts";
import type { Limits } from "./limits.ts";
import type { RegistryConfig } from "./registry.ts";
import { revertReview } from "./review.ts";
import type { AppliedResult, PostgresState, RevertPayload, RowImage } from "./state.ts";
import { describeWrite } from "./writes.ts";

export interface RevertDeps {
  registry: RegistryConfig;
  state: PostgresState;
  limits: Limits;
}

/** Builds the revert of applied action `req.actionId`. @throws NotRevertable, InvalidResourceUrl, InvalidRequest. */
export function prepareRevert(req: PrepareRevertRequest, deps: RevertDeps): PrepareRevertResponse {
  const opened = openResource(req.url, deps.registry);
  const staged = parsePayload(req.payloadJson);
  if (staged.kind !== "write" || !staged.target) {
    throw new NotRevertable(
      `action ${req.actionId} is not a row change; only INSERT, UPDATE and DELETE are reverted here`,
    );
  }
  let result: AppliedResult;
  try {
    result = JSON.parse(req.resultJson) as AppliedResult;
  } catch {
    throw new NotRevertable(`action ${req.actionId} has no result; is it applied?`);
  }
  if (!result.images) {
    throw new NotRevertable(
      `action ${req.actionId} cannot be reverted automatically: ${result.notRevertable ?? "no before-images were captured"}`,
    );
  }
  const payload: RevertPayload = {
    kind: "revert",
    revertsAction: Number(req.actionId),
    target: staged.target,
    primaryKey: result.images.primaryKey,
    rows: result.images.rows,
  };
  const inverse: RowImage[] = payload.rows.map((r) => ({ before: r.after, after: r.before }));
  const table = `${staged.target.schema}.${staged.target.table}`;
  const label = oneLine(`${opened.resource.name}/${opened.resource.database}`);
  const d = describeWrite(
    label,
    {
      sql: `-- restores ${payload.rows.length} row(s) of ${table} changed by action ${req.actionId}`,
      params: [],
      statementKind: "update",
      target: staged.target,
    },
    { rowCount: payload.rows.length, rows: inverse, primaryKey: payload.primaryKey, paired: true },
    deps.limits,
  );
  const localId = deps.state.binding(req.workspaceId, req.binding).ids.next();
  return {
    localId,
    description: {
      title: `Revert action ${req.actionId} on ${oneLine(table, 120)} (${payload.rows.length} row(s))`,
      description: `Revert action ${req.actionId}: each row goes back to its state before it, only if it still holds what the action wrote.\n\n${d.description}`,
      descriptionIsComplete: d.complete,
      delivery: Delivery.DELIVERY_SIMULATE,
      dependsOn: [],
      implementsRevert: req.actionId,
      autoApprovable: false,
      actionKind: { tag: "postgres.revert", label: "Revert SQL write" },
      classifiedBy: "gatekeeper-postgres: a revert restores before-images",
      egress: false,
      ...revertReview(String(req.actionId), table, inverse, payload.primaryKey),
    },
    payloadJson: JSON.stringify(payload),
  };
}
