/**
 * @gatehouse/read-model: projection tables of the workspace streams (inbox across workspaces, action
 * detail, log pages) kept by a checkpointed projector, in SQLite or PostgreSQL, rebuildable from the
 * streams (docs/event-store.md "Read models").
 */
export { ReadModelBehind } from "./errors.ts";
export { Leadership, type LeadershipOptions, PROJECTOR_LOCK_KEY } from "./leader.ts";
export { type ReadModel, type ReadModelOptions, startReadModel } from "./read-model.ts";
