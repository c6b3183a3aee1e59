/**
 * Model provider configuration of the built-in agent, validated with zod. One deployment-wide model
 * from the environment, optionally overridden per workspace by a YAML file. Keys are never values in
 * either: each names a file (a mounted Kubernetes Secret, or a local file) that holds the key, read
 * when a model is made; configuration summaries and errors name the file, never its content.
 *
 * Environment (the worker, which calls the model):
 *   AGENT_PROVIDER        "openai-compatible" (vLLM, llama.cpp server, Ollama, OpenAI, …), "anthropic", "google"
 *   AGENT_MODEL           the provider's model id, e.g. "qwen3-coder", "claude-sonnet-4-5", "gemini-2.5-pro"
 *   AGENT_BASE_URL        endpoint; required for openai-compatible (e.g. http://127.0.0.1:11434/v1), optional otherwise
 *   AGENT_API_KEY_FILE    file holding the key; optional for openai-compatible (local servers need none)
 *   AGENT_MODELS_FILE     optional YAML: `workspaces: { <workspace id>: { provider, model, baseUrl, apiKeyFile } }`
 *   AGENT_MAX_STEPS       model calls per turn (default 12, at most 100)
 *   AGENT_MAX_TURN_TOKENS input+output tokens per turn (default 200000)
 *   AGENT_MAX_RESULT_BYTES bytes of one tool result given back to the model (default 16384, at most 262144)
 *   AGENT_MODEL_ATTEMPTS  attempts of one model call on 429/5xx/connection errors, with backoff (default 4)
 */
import { readFileSync, statSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

/** The providers the agent speaks to, through the Vercel AI SDK. */
export const PROVIDERS = ["openai-compatible", "anthropic", "google"] as const;
export type ProviderKind = (typeof PROVIDERS)[number];

/** One model: which provider, which model, where, and the file holding its key. */
export const modelConfigSchema = z
  .object({
    provider: z.enum(PROVIDERS, { error: `set the provider: one of ${PROVIDERS.join(", ")}` }),
    model: z
      .string({ error: "set the provider's model id, e.g. qwen3-coder" })
      .min(1, "set the provider's model id, e.g. qwen3-coder")
      .max(200, "a model id has at most 200 characters"),
    baseUrl: z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL, e.g. http://127.0.0.1:11434/v1" })
      .optional(),
    apiKeyFile: z.string().min(1).optional(),
  })
  .strict()
  .refine((c) => c.provider !== "openai-compatible" || c.baseUrl, {
    message: "an openai-compatible provider needs baseUrl (e.g. http://127.0.0.1:11434/v1 for Ollama)",
    path: ["baseUrl"],
  })
  .refine((c) => c.provider === "openai-compatible" || c.apiKeyFile, {
    message: "anthropic and google need apiKeyFile: a file holding the key (e.g. a mounted Secret)",
    path: ["apiKeyFile"],
  });
export type ModelConfig = z.infer<typeof modelConfigSchema>;

/** Limits of one turn. */
export interface TurnLimits {
  /** Model calls per turn. */
  maxSteps: number;
  /** Input + output tokens per turn, as providers report them. */
  maxTokens: number;
  /** Bytes of one tool result text given back to the model (longer ones are cut, saying so). */
  maxResultBytes: number;
  /** Attempts of one model call on a retryable provider error. */
  modelAttempts: number;
}

/** The agent's whole configuration. */
export interface AgentConfig {
  /** The deployment's model; undefined when AGENT_PROVIDER is unset (then only workspaces listed in the file have one). */
  deployment: ModelConfig | undefined;
  /** Per-workspace models from AGENT_MODELS_FILE. */
  workspaces: Map<string, ModelConfig>;
  limits: TurnLimits;
}

/** A configuration error naming the variable or file and the fix. */
export class AgentConfigError extends Error {
  override name = "AgentConfigError";
}

/** An empty (or blank) variable counts as unset, as a chart or compose file may render one. */
const unsetIfBlank = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

/** A whole number in decimal digits (no "0x10", "1e6" or "2.5"), the default when unset or blank. */
const int = (name: string, fallback: number, min: number, max: number) =>
  z.preprocess(
    unsetIfBlank,
    z
      .string()
      .trim()
      .regex(/^\d+$/, `${name} must be a whole number (decimal digits), between ${min} and ${max}`)
      .transform(Number)
      .pipe(z.number().min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`))
      .optional()
      .transform((v) => v ?? fallback),
  );

const optionalText = z.preprocess(unsetIfBlank, z.string().optional());

const envSchema = z.object({
  AGENT_PROVIDER: z.preprocess(
    unsetIfBlank,
    z.enum(PROVIDERS, { error: `AGENT_PROVIDER must be one of ${PROVIDERS.join(", ")}` }).optional(),
  ),
  AGENT_MODEL: optionalText,
  AGENT_BASE_URL: optionalText,
  AGENT_API_KEY_FILE: optionalText,
  AGENT_MODELS_FILE: optionalText,
  AGENT_MAX_STEPS: int("AGENT_MAX_STEPS", 12, 1, 100),
  AGENT_MAX_TURN_TOKENS: int("AGENT_MAX_TURN_TOKENS", 200_000, 1_000, 10_000_000),
  AGENT_MAX_RESULT_BYTES: int("AGENT_MAX_RESULT_BYTES", 16_384, 1_024, 262_144),
  AGENT_MODEL_ATTEMPTS: int("AGENT_MODEL_ATTEMPTS", 4, 1, 20),
});

function issues(err: z.ZodError, where: string): string {
  return err.issues
    .map((i) => {
      const at = [where, ...i.path.map(String)].filter(Boolean).join(".");
      return at ? `${at}: ${i.message}` : i.message;
    })
    .join("; ");
}

/**
 * Reads the agent configuration from `env` (and AGENT_MODELS_FILE when set).
 * @throws AgentConfigError naming each wrong variable or file entry.
 */
export function agentConfigFromEnv(env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new AgentConfigError(parsed.error.issues.map((i) => i.message).join("; "));
  const e = parsed.data;
  let deployment: ModelConfig | undefined;
  if (e.AGENT_PROVIDER || e.AGENT_MODEL) {
    const m = modelConfigSchema.safeParse({
      provider: e.AGENT_PROVIDER,
      model: e.AGENT_MODEL,
      baseUrl: e.AGENT_BASE_URL,
      apiKeyFile: e.AGENT_API_KEY_FILE,
    });
    if (!m.success)
      throw new AgentConfigError(
        issues(m.error, "AGENT").replace(
          /AGENT\.(\w+)/g,
          (_, k: string) => `AGENT_${k.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`,
        ),
      );
    deployment = m.data;
  }
  const workspaces = e.AGENT_MODELS_FILE ? readModelsFile(e.AGENT_MODELS_FILE) : new Map();
  if (deployment?.apiKeyFile) checkKeyFile(deployment.apiKeyFile, "AGENT_API_KEY_FILE");
  for (const [w, m] of workspaces) {
    if (m.apiKeyFile) checkKeyFile(m.apiKeyFile, `AGENT_MODELS_FILE workspaces.${w}.apiKeyFile`);
  }
  return {
    deployment,
    workspaces,
    limits: {
      maxSteps: e.AGENT_MAX_STEPS,
      maxTokens: e.AGENT_MAX_TURN_TOKENS,
      maxResultBytes: e.AGENT_MAX_RESULT_BYTES,
      modelAttempts: e.AGENT_MODEL_ATTEMPTS,
    },
  };
}

/**
 * Checks at start that a key file exists, is a file and is not empty, so a missing Secret mount is
 * named when the worker starts, not at a person's first chat. The key itself is read only when a model
 * is made (so a rotated Secret is picked up) and never kept in the configuration.
 * @throws AgentConfigError naming `setting` and the path (never the file's content).
 */
function checkKeyFile(path: string, setting: string): void {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile())
      throw new AgentConfigError(`${setting}: ${path} is not a file; point it at the file holding the key`);
    size = st.size;
  } catch (err) {
    if (err instanceof AgentConfigError) throw err;
    throw new AgentConfigError(
      `${setting}: the key file ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"}); mount the Secret there or fix the path`,
    );
  }
  if (size === 0) throw new AgentConfigError(`${setting}: the key file ${path} is empty`);
}

const modelsFileSchema = z
  .object(
    { workspaces: z.record(z.string().min(1), modelConfigSchema) },
    {
      error: "expected a mapping `workspaces: { <workspace id>: { provider, model, baseUrl, apiKeyFile } }`",
    },
  )
  .strict();

/**
 * Reads the per-workspace models YAML (`workspaces: { w1: { provider, model, baseUrl, apiKeyFile } }`).
 * @throws AgentConfigError naming the file and each wrong entry.
 */
export function readModelsFile(path: string): Map<string, ModelConfig> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new AgentConfigError(
      `AGENT_MODELS_FILE ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new AgentConfigError(
      `AGENT_MODELS_FILE ${path} is not YAML: ${(err as Error).message.split("\n")[0]}`,
    );
  }
  const parsed = modelsFileSchema.safeParse(doc);
  if (!parsed.success) throw new AgentConfigError(`AGENT_MODELS_FILE ${path}: ${issues(parsed.error, "")}`);
  return new Map(Object.entries(parsed.data.workspaces));
}

/**
 * The model of a workspace: its entry in the models file, else the deployment's.
 * @throws AgentConfigError when neither is configured, saying how to configure one.
 */
export function modelFor(config: AgentConfig, workspaceId: string): ModelConfig {
  const m = config.workspaces.get(workspaceId) ?? config.deployment;
  if (!m)
    throw new AgentConfigError(
      `no model is configured for workspace ${workspaceId}: set AGENT_PROVIDER and AGENT_MODEL (with AGENT_BASE_URL / AGENT_API_KEY_FILE) on the worker, or list the workspace in AGENT_MODELS_FILE`,
    );
  return m;
}

/** "<provider>:<model>", as chat events and logs name a model (never a key or URL credentials). */
export function modelLabel(m: ModelConfig): string {
  return `${m.provider}:${m.model}`;
}

/** A printable summary of the configuration: models, endpoints and key files (never keys). */
export function describeAgentConfig(config: AgentConfig): Record<string, unknown> {
  const one = (m: ModelConfig) => ({
    model: modelLabel(m),
    baseUrl: m.baseUrl ? new URL(m.baseUrl).origin + new URL(m.baseUrl).pathname : undefined,
    apiKeyFile: m.apiKeyFile,
  });
  return {
    deployment: config.deployment ? one(config.deployment) : "none",
    workspaces: Object.fromEntries([...config.workspaces].map(([w, m]) => [w, one(m)])),
    limits: config.limits,
  };
}
