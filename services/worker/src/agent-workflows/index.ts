/** The workflows the agent worker registers (bundled from this file via `workflowsPath`). */
export { agentTurn } from "./agent-turn.ts";
