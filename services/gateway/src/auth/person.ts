/** Who is calling the gateway, and the two ways a call is refused. */
import type { Role } from "@gatehouse/gateway-contract";

/** An authenticated person. */
export interface Person {
  /** Stable id (OIDC `sub` or the dev token's subject); recorded as `decidedBy` on decisions. */
  subject: string;
  /** Display name. */
  name: string;
  /** Never empty: a token without a Gatehouse role is refused. */
  roles: Role[];
}

/** Turns a bearer token into a {@link Person}. */
export interface Authenticator {
  /**
   * @throws Unauthenticated when the token is not one this authenticator accepts (bad signature,
   *   expired, wrong issuer/audience, unknown dev token).
   * @throws Forbidden when the token is valid but carries no Gatehouse role.
   */
  authenticate(token: string): Promise<Person>;
}

/** 401: no token, or a token that could not be verified. The message says why, never the token. */
export class Unauthenticated extends Error {
  override name = "Unauthenticated";
}

/** 403: the person is known but their role may not do this. */
export class Forbidden extends Error {
  override name = "Forbidden";
}

/** Whether the person may approve or reject. */
export function canDecide(person: Person): boolean {
  return person.roles.includes("approver") || person.roles.includes("admin");
}

/** Whether the person may set auto-approval rules. */
export function canSetRules(person: Person): boolean {
  return person.roles.includes("admin");
}

/** @throws Forbidden naming the role needed, when the person may not decide. */
export function requireDecider(person: Person): void {
  if (!canDecide(person)) {
    throw new Forbidden(
      `${person.subject} has role(s) ${person.roles.join(", ")}: deciding actions needs the approver or admin role`,
    );
  }
}

/** @throws Forbidden when the person is not an admin. */
export function requireAdmin(person: Person): void {
  if (!canSetRules(person)) {
    throw new Forbidden(
      `${person.subject} has role(s) ${person.roles.join(", ")}: auto-approval rules need the admin role`,
    );
  }
}
