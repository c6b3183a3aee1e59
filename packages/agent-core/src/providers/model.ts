/**
 * Making a language model from a ModelConfig through the Vercel AI SDK's providers, with the key
 * read from its file at that moment (it lives only in the provider object, never in events or logs),
 * and turning provider errors into messages safe to record.
 */
import { readFileSync } from "node:fs";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, type LanguageModel, RetryError } from "ai";
import { AgentConfigError, type ModelConfig } from "./config.ts";

/** A model ready to call, and its key (to scrub it from any text that leaves the activity). */
export interface ReadyModel {
  model: LanguageModel;
  /** The key read from apiKeyFile ("" when none); never log or record it. */
  secret: string;
}

/**
 * Reads the key file (trimmed) and makes the provider's model.
 * @throws AgentConfigError naming the key file when it cannot be read or is empty.
 */
export function makeModel(m: ModelConfig): ReadyModel {
  let secret = "";
  if (m.apiKeyFile) {
    try {
      secret = readFileSync(m.apiKeyFile, "utf8").trim();
    } catch (err) {
      throw new AgentConfigError(
        `the key file ${m.apiKeyFile} of ${m.provider} cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"}); mount the Secret there or fix apiKeyFile`,
      );
    }
    if (!secret) throw new AgentConfigError(`the key file ${m.apiKeyFile} of ${m.provider} is empty`);
  }
  switch (m.provider) {
    case "openai-compatible":
      return {
        secret,
        model: createOpenAICompatible({
          name: "openai-compatible",
          baseURL: m.baseUrl as string,
          ...(secret ? { apiKey: secret } : {}),
          includeUsage: true,
        })(m.model),
      };
    case "anthropic":
      return { secret, model: createAnthropic({ apiKey: secret, baseURL: m.baseUrl })(m.model) };
    case "google":
      return { secret, model: createGoogleGenerativeAI({ apiKey: secret, baseURL: m.baseUrl })(m.model) };
  }
}

/** Replaces every occurrence of `secret` (when non-empty) in `text` with "[redacted]". */
export function scrub(text: string, secret: string): string {
  return secret ? text.split(secret).join("[redacted]") : text;
}

/** A request URL as an error may show it: origin and path, without credentials or query. */
function endpointOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return "the model endpoint";
  }
}

/** How a failed model call is classified. */
export interface ProviderFailure {
  /** True for 408/409/429/5xx and for no answer at all (connection refused or reset): worth retrying. */
  retryable: boolean;
  /** HTTP status, 0 when there was no answer. */
  status: number;
  /** The provider's own message (bounded to 500 characters, the key scrubbed). */
  message: string;
}

/** Classifies an error thrown by an AI SDK call. */
export function providerFailure(err: unknown, secret: string): ProviderFailure {
  const e = RetryError.isInstance(err) ? err.lastError : err;
  if (APICallError.isInstance(e)) {
    const status = e.statusCode ?? 0;
    const retryable = status === 0 || status === 408 || status === 409 || status === 429 || status >= 500;
    const message = status
      ? `HTTP ${status}: ${e.message}`
      : `no answer from ${endpointOf(e.url)}: ${e.message} (is the model server up, and its base URL right?)`;
    return { retryable, status, message: scrub(message, secret).slice(0, 500) };
  }
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return { retryable: false, status: 0, message: scrub(message, secret).slice(0, 500) };
}
