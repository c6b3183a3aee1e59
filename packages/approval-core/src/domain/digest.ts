/**
 * The description digest: what binds a person's decision to what they were shown (docs/architecture.md
 * "The approval contract"). A client that shows an action sends back the digest of the record it
 * rendered (ActionRecord.description_digest); the approval service refuses a decision whose digest
 * differs from the stored description's, and records the digest in ActionApproved.
 *
 * `sha256hex("gatehouse.description.v1\n" ‖ workspaceId ‖ "\n" ‖ actionId ‖ "\n" ‖ JCS(description))`
 * where JCS is RFC 8785 canonical JSON of the description's proto3 JSON (`ActionDescription.toJSON`).
 * The workspace and action id are inside, so the digest of one action never matches another's,
 * even when their descriptions are equal.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "@gatehouse/event-store";
import { ActionDescription } from "@gatehouse/proto";

const DOMAIN = "gatehouse.description.v1";

/**
 * @param workspaceId the workspace's id
 * @param actionId the action's log id
 * @param description the stored description (undefined hashes as `{}`)
 * @returns 64 lowercase hex characters
 */
export function descriptionDigest(
  workspaceId: string,
  actionId: number,
  description: ActionDescription | undefined,
): string {
  const json = ActionDescription.toJSON(description ?? ActionDescription.fromPartial({}));
  return createHash("sha256")
    .update(`${DOMAIN}\n${workspaceId}\n${actionId}\n`)
    .update(canonicalJson(json))
    .digest("hex");
}
