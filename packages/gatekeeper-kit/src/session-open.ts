/**
 * Checks of the `open` message that starts every `Gatekeeper.OpenSession` stream
 * (proto/gatehouse/v1/gatekeeper.proto `SessionOpen`), common to all gatekeepers. What the URL
 * means is the gatekeeper's business; this module checks only the shape the kernel must send.
 */
import type { SessionOpen } from "@gatehouse/proto";
import { InvalidRequest } from "./errors.ts";

/** A binding name: an upper-case identifier such as "MEMORY" or "REPO_DOCS". */
export const BINDING_NAME = /^[A-Z][A-Z0-9_]*$/;

/**
 * Checks that every field the kernel must set is present, the binding is an upper-case
 * identifier and `trust` is "vetted", "byo" or empty.
 * @throws InvalidRequest naming the field (`open.workspaceId`, `open.binding`, `open.trust`, ...).
 */
export function checkOpenFields(open: SessionOpen): void {
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
}
