/**
 * Errors of the PostgreSQL gatekeeper's scope layer. Messages name the part at fault and the
 * accepted form, and never contain a password or data read from a database.
 *
 * They extend plain `Error` for now: this layer is not wired into a gatekeeper yet. When the
 * service is built on `packages/gatekeeper-kit` they become `GatekeeperError`s with gRPC codes,
 * like the other gatekeepers' errors.
 */

/** A `postgres://` resource URL or its fragment is malformed; parsing fails closed. */
export class InvalidResourceUrl extends Error {
  override name = "InvalidResourceUrl";
}

/** The administrator's registry file is unreadable, not YAML, or fails validation. */
export class RegistryInvalid extends Error {
  override name = "RegistryInvalid";
}
