/** @gatehouse/event-store: the event-store port, its SQLite backend, chain verification, conformance suite, bench. */

export { type BenchAppendsOptions, type BenchAppendsResult, benchAppends } from "./bench.ts";
export { type MakeStore, runEventStoreConformance } from "./conformance.ts";
export { canonicalJson, eventHash } from "./hash.ts";
export * from "./port.ts";
export { openSqliteEventStore, SqliteEventStore, type SqliteEventStoreOptions } from "./sqlite.ts";
export { type VerifyResult, verifyStream } from "./verify.ts";
