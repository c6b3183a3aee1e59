/** Helpers shared by the approval service's integration suites. */
import assert from "node:assert/strict";
import type { SubmitActionResponse } from "@gatehouse/proto";
import { type ServiceError, status } from "@grpc/grpc-js";
import { call, description, type Harness } from "./harness.ts";

/** Submits an action through the ApprovalQueue with the binding's caller token; returns its id. */
export async function submit(
  h: Harness,
  binding: string,
  localId: string,
  dependsOn: string[] = [],
  over = {},
): Promise<number> {
  const res = await call<unknown, SubmitActionResponse>(h.queue, "submitAction", {
    callerToken: h.token(binding),
    localId,
    description: description({ dependsOn, ...over }),
    payloadJson: JSON.stringify({ tool: "create_entities" }),
  });
  return res.actionId;
}

/** Asserts the call fails with `code` (and a details text matching `message`); returns the error. */
export async function rejects(p: Promise<unknown>, code: status, message?: RegExp): Promise<ServiceError> {
  const err = (await p.then(
    () => assert.fail("expected the call to fail"),
    (e: ServiceError) => e,
  )) as ServiceError;
  assert.equal(err.code, code, `expected ${status[code]}, got ${status[err.code]}: ${err.details}`);
  if (message) assert.match(err.details, message);
  return err;
}

/** The workspace stream's current revision. */
export const revision = (h: Harness) => h.revision();
