/** Test-only helpers: the FAKE OpenAI-compatible server. Never used by a service. */
export * from "./fake-openai-server.ts";
