/** @gatehouse/event-store: the event-store port, its SQLite backend, chain verification, bench. The conformance suite is `@gatehouse/event-store/conformance` (it loads node:test). */

export { type BenchAppendsOptions, type BenchAppendsResult, benchAppends } from "./bench.ts";
export { canonicalJson, eventHash } from "./hash.ts";
export * from "./port.ts";
export { openSqliteEventStore, SqliteEventStore, type SqliteEventStoreOptions } from "./sqlite.ts";
export { type VerifyResult, verifyStream } from "./verify.ts";
