/**
 * @gatehouse/agent-core: what the built-in Code Mode agent's services share — chat events, their
 * fold and decider (`./chat`). Provider configuration is at `@gatehouse/agent-core/providers`, the
 * FAKE OpenAI-compatible server for tests at `@gatehouse/agent-core/testing`.
 */
export * from "./chat/index.ts";
