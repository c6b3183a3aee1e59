/**
 * Provider configuration and models: env and per-workspace YAML validated with errors naming the
 * variable; keys come only from files and never appear in summaries or errors; a model made from the
 * configuration reaches the FAKE OpenAI-compatible server with its key, and provider errors are
 * classified (429/5xx retryable, 4xx not) with the key scrubbed from their message.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { generateText } from "ai";
import {
  AgentConfigError,
  agentConfigFromEnv,
  describeAgentConfig,
  makeModel,
  modelFor,
  modelLabel,
  providerFailure,
} from "../src/providers/index.ts";
import { type FakeOpenAiServer, startFakeOpenAiServer } from "../src/testing/index.ts";

const KEY = "sk-test-0123456789abcdef";
let dir: string;
let keyFile: string;
let fake: FakeOpenAiServer;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), "agent-providers-"));
  keyFile = join(dir, "key");
  writeFileSync(keyFile, `${KEY}\n`);
  fake = await startFakeOpenAiServer();
});
after(async () => {
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the deployment's model comes from AGENT_* variables, with defaults for the limits", () => {
  const c = agentConfigFromEnv({
    AGENT_PROVIDER: "openai-compatible",
    AGENT_MODEL: "qwen3",
    AGENT_BASE_URL: "http://127.0.0.1:11434/v1",
  });
  assert.equal(c.deployment && modelLabel(c.deployment), "openai-compatible:qwen3");
  assert.deepEqual(c.limits, { maxSteps: 12, maxTokens: 200_000, maxResultBytes: 16_384, modelAttempts: 4 });
});

test("bad variables are refused naming the variable and the fix", () => {
  const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
    [{ AGENT_PROVIDER: "openai" }, /AGENT_PROVIDER must be one of openai-compatible, anthropic, google/],
    [{ AGENT_PROVIDER: "openai-compatible", AGENT_MODEL: "m" }, /AGENT_BASE_URL.*needs baseUrl/],
    [{ AGENT_PROVIDER: "anthropic", AGENT_MODEL: "claude" }, /AGENT_API_KEY_FILE.*apiKeyFile/],
    [{ AGENT_MAX_STEPS: "0" }, /AGENT_MAX_STEPS must be at least 1/],
    [{ AGENT_MAX_STEPS: "many" }, /AGENT_MAX_STEPS must be a whole number/],
    [
      { AGENT_MAX_STEPS: "0x10" },
      /AGENT_MAX_STEPS must be a whole number \(decimal digits\), between 1 and 100/,
    ],
    [{ AGENT_MAX_TURN_TOKENS: "1e6" }, /AGENT_MAX_TURN_TOKENS must be a whole number/],
    [{ AGENT_PROVIDER: "openai-compatible", AGENT_MODEL: "" }, /^AGENT_MODEL: set the provider's model id/],
    [{ AGENT_MODEL: "m" }, /^AGENT_PROVIDER: set the provider: one of openai-compatible/],
    [
      { AGENT_PROVIDER: "openai-compatible", AGENT_MODEL: "m", AGENT_BASE_URL: "localhost:11434" },
      /^AGENT_BASE_URL: must be an http\(s\) URL/,
    ],
    [
      { AGENT_MODELS_FILE: "/nonexistent/models.yaml" },
      /AGENT_MODELS_FILE \/nonexistent\/models.yaml cannot be read: ENOENT/,
    ],
    [
      {
        AGENT_PROVIDER: "anthropic",
        AGENT_MODEL: "claude",
        AGENT_API_KEY_FILE: "/nonexistent/anthropic-key",
      },
      /AGENT_API_KEY_FILE: the key file \/nonexistent\/anthropic-key cannot be read \(ENOENT\); mount the Secret there/,
    ],
  ];
  for (const [env, message] of cases)
    assert.throws(() => agentConfigFromEnv(env), { name: "AgentConfigError", message });
});

test("a blank variable counts as unset: the limits keep their defaults, and blank AGENT_PROVIDER and AGENT_MODEL leave the agent off", () => {
  const c = agentConfigFromEnv({
    AGENT_PROVIDER: " ",
    AGENT_MODEL: "",
    AGENT_MAX_STEPS: "",
    AGENT_MODEL_ATTEMPTS: " ",
  });
  assert.equal(c.deployment, undefined);
  assert.deepEqual(c.limits, { maxSteps: 12, maxTokens: 200_000, maxResultBytes: 16_384, modelAttempts: 4 });
});

test("a workspace listed in AGENT_MODELS_FILE gets its own model; others the deployment's; none: a clear error", () => {
  const file = join(dir, "models.yaml");
  writeFileSync(
    file,
    `workspaces:\n  w-special:\n    provider: anthropic\n    model: claude-x\n    apiKeyFile: ${keyFile}\n`,
  );
  const c = agentConfigFromEnv({
    AGENT_PROVIDER: "openai-compatible",
    AGENT_MODEL: "m",
    AGENT_BASE_URL: fake.baseUrl,
    AGENT_MODELS_FILE: file,
  });
  assert.equal(modelLabel(modelFor(c, "w-special")), "anthropic:claude-x");
  assert.equal(modelLabel(modelFor(c, "w-other")), "openai-compatible:m");
  const none = agentConfigFromEnv({});
  assert.throws(() => modelFor(none, "w1"), /no model is configured for workspace w1: set AGENT_PROVIDER/);
  writeFileSync(file, "workspaces:\n  w1:\n    provider: anthropic\n    model: c\n    apiKey: inline\n");
  assert.throws(
    () => agentConfigFromEnv({ AGENT_MODELS_FILE: file }),
    /AGENT_MODELS_FILE .*models.yaml: .*apiKey/,
  );
  writeFileSync(file, "");
  assert.throws(
    () => agentConfigFromEnv({ AGENT_MODELS_FILE: file }),
    /AGENT_MODELS_FILE .*models.yaml: expected a mapping `workspaces:/,
  );
});

test("the key is read from its file, sent to the provider, and never shown in a summary or an error", async () => {
  const c = agentConfigFromEnv({
    AGENT_PROVIDER: "openai-compatible",
    AGENT_MODEL: "m",
    AGENT_BASE_URL: fake.baseUrl,
    AGENT_API_KEY_FILE: keyFile,
  });
  assert.ok(!JSON.stringify(describeAgentConfig(c)).includes(KEY));
  const ready = makeModel(modelFor(c, "w1"));
  fake.push({ kind: "text", text: "hello" });
  const r = await generateText({ model: ready.model, prompt: "hi", maxRetries: 0 });
  assert.equal(r.text, "hello");
  assert.equal(fake.requests.at(-1)?.authorization, `Bearer ${KEY}`);
  fake.push({ kind: "error", status: 401, message: `Incorrect API key provided: ${KEY}` });
  const err = await generateText({ model: ready.model, prompt: "hi", maxRetries: 0 }).catch(
    (e: unknown) => e,
  );
  const failure = providerFailure(err, ready.secret);
  assert.deepEqual([failure.retryable, failure.status], [false, 401]);
  assert.match(failure.message, /HTTP 401: Incorrect API key provided: \[redacted\]/);
  assert.ok(!failure.message.includes(KEY));
  assert.throws(
    () => makeModel({ provider: "anthropic", model: "c", apiKeyFile: join(dir, "missing") }),
    (e: Error) => {
      assert.ok(e instanceof AgentConfigError);
      assert.match(e.message, /key file .*missing of anthropic cannot be read \(ENOENT\)/);
      return true;
    },
  );
});

test("429 and 5xx answers are retryable with the provider's message; no answer at all is retryable too", async () => {
  const ready = makeModel({ provider: "openai-compatible", model: "m", baseUrl: fake.baseUrl });
  for (const [status, message] of [
    [429, "Rate limit reached for requests"],
    [503, "The server is overloaded"],
  ] as const) {
    fake.push({ kind: "error", status, message });
    const err = await generateText({ model: ready.model, prompt: "hi", maxRetries: 0 }).catch(
      (e: unknown) => e,
    );
    const f = providerFailure(err, "");
    assert.deepEqual([f.retryable, f.status], [true, status]);
    assert.match(f.message, new RegExp(message));
  }
  const closed = makeModel({ provider: "openai-compatible", model: "m", baseUrl: "http://127.0.0.1:9/v1" });
  const err = await generateText({ model: closed.model, prompt: "hi", maxRetries: 0 }).catch(
    (e: unknown) => e,
  );
  const f = providerFailure(err, "");
  assert.equal(f.retryable, true);
  assert.match(
    f.message,
    /^no answer from http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions: .*base URL right\?\)$/,
  );
});

test("the anthropic and google providers are made from their configuration", () => {
  for (const provider of ["anthropic", "google"] as const) {
    const ready = makeModel({ provider, model: "x", apiKeyFile: keyFile });
    assert.equal(typeof ready.model, "object");
    assert.equal(ready.secret, KEY);
  }
});
