/** @gatehouse/event-store: the event-store port, its SQLite, PostgreSQL and KurrentDB backends, chain verification, copy between stores. The conformance suite is `@gatehouse/event-store/conformance` (it loads node:test). */

export {
  type MigrateReport,
  migrateStore,
  openStoreAt,
  type StreamVerification,
  sameStore,
  type VerifyStoreResult,
  verifyStore,
} from "./admin.ts";
export {
  CopyDiverged,
  type CopyOptions,
  type CopyProgress,
  type CopyResult,
  CopySourceInvalid,
  copyEventStore,
} from "./copy.ts";
export { canonicalJson, eventHash } from "./hash.ts";
export {
  KurrentEventStore,
  type KurrentEventStoreOptions,
  openKurrentEventStore,
} from "./kurrentdb.ts";
export {
  checkStoreEnv,
  EVENT_STORE_URL_ENV,
  KURRENT_OPEN_DEADLINE_MS,
  openEventStore,
  parseStoreUrl,
  type StoreTarget,
  storeUrlFromEnv,
  storeUrlProblem,
} from "./open.ts";
export * from "./port.ts";
export { openPostgresEventStore, PostgresEventStore, type PostgresEventStoreOptions } from "./postgres.ts";
export {
  checkPostgresSchema,
  migrateCommand,
  migratePostgres,
  POSTGRES_SCHEMA_VERSION,
  postgresSchemaVersion,
} from "./postgres-schema.ts";
export { openSqliteEventStore, SqliteEventStore, type SqliteEventStoreOptions } from "./sqlite.ts";
export { redactUrl } from "./url.ts";
export { type VerifyResult, verifyStream } from "./verify.ts";
