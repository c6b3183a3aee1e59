/**
 * Errors of the PostgreSQL gatekeeper. Each extends the kit's `GatekeeperError`, so it keeps its
 * message across capnweb and maps to a gRPC status in one place. Messages name the part at fault
 * and the accepted form, and never contain a password or row data read from a database.
 */
import { GatekeeperError } from "@gatehouse/gatekeeper-kit";

export { ApprovalRefused, GatekeeperError, InvalidRequest, UnknownAction } from "@gatehouse/gatekeeper-kit";

/** A `postgres://` resource URL or its fragment is malformed, or names no registered server/database. */
export class InvalidResourceUrl extends GatekeeperError {
  override name = "InvalidResourceUrl";
  readonly code = "invalid_argument" as const;
}

/** The administrator's registry file is unreadable, not YAML, or fails validation. */
export class RegistryInvalid extends Error {
  override name = "RegistryInvalid";
}

/**
 * A statement was refused before it reached the database: a relation, function or statement kind
 * outside the grant, a second statement, a write through a read method. `position` is set for a
 * syntax error (PostgreSQL's 1-based character offset, as psql shows it).
 */
export class StatementRefused extends GatekeeperError {
  override name = "StatementRefused";
  readonly code = "permission_denied" as const;
  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(message);
  }
}

/** The statement does not parse; the message is PostgreSQL's parser's, with the position. */
export class SqlSyntaxError extends GatekeeperError {
  override name = "SqlSyntaxError";
  readonly code = "invalid_argument" as const;
}

/**
 * PostgreSQL refused or failed the statement (an error with a SQLSTATE): the message is the
 * server's, prefixed with its SQLSTATE, e.g. `42703 column "x" does not exist`.
 */
export class QueryFailed extends GatekeeperError {
  override name = "QueryFailed";
  readonly code = "failed_precondition" as const;
}

/** The statement ran longer than the registry's `statementTimeoutMs` and was cancelled by the server. */
export class StatementTimeout extends GatekeeperError {
  override name = "StatementTimeout";
  readonly code = "failed_precondition" as const;
}

/** The database could not be reached, or the connection dropped mid-statement; nothing was returned. */
export class DatabaseUnavailable extends GatekeeperError {
  override name = "DatabaseUnavailable";
  readonly code = "unavailable" as const;
}

/**
 * An approved write provably did not take effect although some of its transaction reached the
 * server: the connection ended (or the apply's deadline destroyed it) before COMMIT was sent, and
 * PostgreSQL rolls back a transaction whose connection ends without COMMIT. An apply reports it as
 * the outcome "failed" (apply.ts); the message names the server's origin and the cause.
 */
export class NotApplied extends GatekeeperError {
  override name = "NotApplied";
  readonly code = "failed_precondition" as const;
}

/** A table or column the caller named does not exist in the binding's scope. */
export class NotFound extends GatekeeperError {
  override name = "NotFound";
  readonly code = "not_found" as const;
}

/** The action cannot be reverted (not applied, no before-images, or the rows changed since). */
export class NotRevertable extends GatekeeperError {
  override name = "NotRevertable";
  readonly code = "failed_precondition" as const;
}

/** A reply or row is larger than one page may carry. */
export class RowTooLarge extends GatekeeperError {
  override name = "RowTooLarge";
  readonly code = "failed_precondition" as const;
}
