/**
 * Caller tokens: the kernel mints one per (execution, binding); gatekeepers pass it on every
 * ApprovalQueue call; the approval service verifies it. Code in the sandbox never sees it.
 *
 * Format: `gh1.<base64url(JSON claims)>.<base64url(HMAC-SHA256(secret, "gh1." + payload))>`.
 * The secret is shared by kernel and approval (env `GATEHOUSE_CALLER_TOKEN_SECRET`, ≥ 32 bytes).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";

/** The caller kinds of docs/architecture.md "The approval contract". */
export const CallerKind = z.enum(["agent", "gadget", "user", "hook"]);

/** Claims carried by a caller token. `exp` is a Unix time in seconds. */
export const CallerClaims = z.object({
  workspaceId: z.string().min(1),
  binding: z.string().min(1),
  caller: z.object({ kind: CallerKind, id: z.string() }),
  executionId: z.string().min(1),
  /** The binding's grant (revision of its ResourceIntroduced); absent in tokens of older kernels. */
  grant: z.number().int().nonnegative().optional(),
  exp: z.number().int().positive(),
});
export type CallerClaims = z.infer<typeof CallerClaims>;

/** Raised when a token is malformed, forged, expired or for another workspace/binding. */
export class CallerTokenInvalid extends Error {
  override name = "CallerTokenInvalid";
}

const PREFIX = "gh1.";

function sign(secret: string, payload: string): string {
  return createHmac("sha256", secret)
    .update(PREFIX + payload)
    .digest("base64url");
}

function checkSecret(secret: string): void {
  if (Buffer.byteLength(secret) < 32) {
    throw new Error("caller token secret must be at least 32 bytes (set GATEHOUSE_CALLER_TOKEN_SECRET)");
  }
}

/**
 * Mints a token for `claims` (without `exp`); valid for `ttlSeconds` (default 3600).
 * @throws Error when the secret is shorter than 32 bytes.
 */
export function mintCallerToken(
  secret: string,
  claims: Omit<CallerClaims, "exp">,
  ttlSeconds = 3600,
  nowMs = Date.now(),
): string {
  checkSecret(secret);
  const full = CallerClaims.parse({ ...claims, exp: Math.floor(nowMs / 1000) + ttlSeconds });
  const payload = Buffer.from(JSON.stringify(full)).toString("base64url");
  return `${PREFIX}${payload}.${sign(secret, payload)}`;
}

/**
 * Verifies a token's signature and expiry and returns its claims.
 * @throws CallerTokenInvalid naming what is wrong (never echoing the token).
 */
export function verifyCallerToken(secret: string, token: string, nowMs = Date.now()): CallerClaims {
  checkSecret(secret);
  if (typeof token !== "string" || !token.startsWith(PREFIX)) {
    throw new CallerTokenInvalid("caller token is missing or not a Gatehouse token");
  }
  const [payload, mac, ...rest] = token.slice(PREFIX.length).split(".");
  if (!payload || !mac || rest.length > 0) throw new CallerTokenInvalid("caller token is malformed");
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw new CallerTokenInvalid("caller token signature does not match");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    throw new CallerTokenInvalid("caller token payload is not JSON");
  }
  const claims = CallerClaims.safeParse(parsed);
  if (!claims.success) throw new CallerTokenInvalid("caller token claims are invalid");
  if (claims.data.exp * 1000 <= nowMs) throw new CallerTokenInvalid("caller token has expired");
  return claims.data;
}
