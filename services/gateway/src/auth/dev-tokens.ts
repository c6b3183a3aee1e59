/**
 * Static dev tokens: a fixed token → person table, for `gatehouse dev` and local trials only.
 * Loaded from YAML (GATEWAY_DEV_TOKENS_FILE):
 *
 *   tokens:
 *     - token: "at least 16 random characters"
 *       subject: alice
 *       name: Alice Approver     # optional
 *       roles: [approver]        # approver | auditor | admin
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { z } from "zod";
import { type Authenticator, type Person, Unauthenticated } from "./person.ts";

/** One configured dev token. */
export const DevTokenSchema = z
  .object({
    token: z.string().min(16, "a dev token must be at least 16 characters"),
    subject: z.string().min(1, "subject is required"),
    name: z.string().min(1).optional(),
    roles: z
      .array(z.enum(["approver", "auditor", "admin"]))
      .min(1, "give at least one role: approver, auditor or admin"),
  })
  .strict();
export type DevToken = z.infer<typeof DevTokenSchema>;

const FileSchema = z.object({ tokens: z.array(DevTokenSchema).min(1, "list at least one token") }).strict();

/** @throws Error naming the file and the bad field. */
export function loadDevTokensFile(path: string): DevToken[] {
  let raw: unknown;
  try {
    raw = parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`cannot read dev tokens file ${path}: ${(err as Error).message}`);
  }
  const parsed = FileSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid dev tokens file ${path}:\n  ${lines.join("\n  ")}`);
  }
  return parsed.data.tokens;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Accepts exactly the configured tokens (compared as SHA-256 digests in constant time). */
export class DevTokenAuthenticator implements Authenticator {
  private readonly entries: Array<{ digest: Buffer; person: Person }>;

  constructor(tokens: DevToken[]) {
    this.entries = tokens.map((t) => ({
      digest: digest(t.token),
      person: { subject: t.subject, name: t.name ?? t.subject, roles: [...new Set(t.roles)] },
    }));
  }

  /** See {@link Authenticator.authenticate}. */
  async authenticate(token: string): Promise<Person> {
    const d = digest(token);
    let found: Person | undefined;
    for (const e of this.entries) if (timingSafeEqual(e.digest, d)) found = e.person;
    if (!found) throw new Unauthenticated("unknown dev token");
    return found;
  }
}
