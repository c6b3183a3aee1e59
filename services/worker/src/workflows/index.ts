/** The workflows the lifecycle worker registers (bundled from this file via `workflowsPath`). */
export { actionLifecycle } from "./action-lifecycle.ts";
export { awaitDecisionTurn } from "./await-decision-turn.ts";
