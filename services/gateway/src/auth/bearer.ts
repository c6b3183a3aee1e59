/** The bearer token of a request (RFC 6750 §2.1, the Authorization header only). */
import type { FastifyRequest } from "fastify";
import { Unauthenticated } from "./person.ts";

/**
 * @returns the token of `Authorization: Bearer <token>`.
 * @throws Unauthenticated when the header is missing or not of that form (the message says how to send it).
 */
export function bearerToken(req: FastifyRequest): string {
  const header = req.headers.authorization;
  if (!header) throw new Unauthenticated("sign in: send Authorization: Bearer <token>");
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match?.[1]) throw new Unauthenticated('the Authorization header must be "Bearer <token>"');
  return match[1];
}
