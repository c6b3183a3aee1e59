/** The workflows the lifecycle worker registers (bundled from this file via `workflowsPath`). */
export { awaitDecisionTurn } from "./await-decision-turn.ts";
export { bindingRun } from "./binding-run.ts";
