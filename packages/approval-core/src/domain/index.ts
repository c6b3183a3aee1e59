/** The pure approval domain: decider, projection, typed errors. */
export * from "./cascade.ts";
export * from "./commands.ts";
export * from "./decide.ts";
export * from "./digest.ts";
export * from "./errors.ts";
export * from "./events.ts";
export { describeDecided, SERVICE_ACTOR } from "./guards.ts";
export * from "./projection.ts";
export * from "./remove-binding.ts";
export * from "./run-plan.ts";
export * from "./state.ts";
