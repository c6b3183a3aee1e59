/** Model providers of the built-in agent: configuration (env + per-workspace YAML) and models. */
export * from "./config.ts";
export * from "./model.ts";
