/**
 * The FAKE OpenAI-compatible server answers the AI SDK as a real endpoint would: streamed and
 * non-streamed completions, tool calls whose arguments carry a TypeScript snippet (or malformed
 * JSON, kept as sent), scripted error statuses, and a loud 500 once its script is exhausted.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, streamText, tool } from "ai";
import { type FakeOpenAiServer, startFakeOpenAiServer } from "../src/testing/index.ts";

const SNIPPET = "export default async (env) => {\n  return await env.MEMORY.read_graph({});\n};";
const tools = {
  executeCode: tool({
    description: "run",
    inputSchema: jsonSchema({ type: "object", properties: { code: { type: "string" } }, required: ["code"] }),
  }),
};
let fake: FakeOpenAiServer;
before(async () => {
  fake = await startFakeOpenAiServer();
});
after(() => fake?.close());
const model = () => createOpenAICompatible({ name: "fake", baseURL: fake.baseUrl, includeUsage: true })("m");

test("a streamed answer arrives in parts with its tool call's TypeScript intact", async () => {
  fake.push({
    kind: "tool_calls",
    text: "Reading the graph.",
    calls: [{ id: "c1", name: "executeCode", arguments: JSON.stringify({ code: SNIPPET }) }],
    usage: { promptTokens: 100, completionTokens: 20 },
  });
  const s = streamText({ model: model(), prompt: "go", tools, maxRetries: 0 });
  const deltas: string[] = [];
  for await (const p of s.fullStream) if (p.type === "text-delta") deltas.push(p.text);
  assert.ok(deltas.length >= 2, "the text came in more than one delta");
  assert.equal(deltas.join(""), "Reading the graph.");
  const calls = await s.toolCalls;
  assert.deepEqual(
    calls.map((c) => [c.toolCallId, c.toolName, (c.input as { code: string }).code]),
    [["c1", "executeCode", SNIPPET]],
  );
  assert.equal((await s.totalUsage).inputTokens, 100);
  assert.equal(fake.requests.at(-1)?.body.stream, true);
});

test("a paced streamed answer sends its text in pieces of chunkChars, chunkDelayMs apart", async () => {
  const text = "The quick brown fox jumps.";
  fake.push({ kind: "text", text, chunkChars: 5, chunkDelayMs: 40 });
  const s = streamText({ model: model(), prompt: "go", maxRetries: 0 });
  const arrivals: Array<{ text: string; at: number }> = [];
  for await (const p of s.fullStream)
    if (p.type === "text-delta") arrivals.push({ text: p.text, at: Date.now() });
  assert.equal(arrivals.map((a) => a.text).join(""), text);
  assert.equal(arrivals.length, Math.ceil(text.length / 5));
  const spread = (arrivals.at(-1)?.at ?? 0) - (arrivals[0]?.at ?? 0);
  assert.ok(spread >= 40 * (arrivals.length - 1) - 20, `the pieces were paced (spread ${spread} ms)`);
});

test("a non-streamed answer with malformed arguments reaches the client as sent, marked invalid", async () => {
  fake.push({ kind: "tool_calls", calls: [{ name: "executeCode", arguments: '{"code": "export def' }] });
  const r = await generateText({ model: model(), prompt: "go", tools, maxRetries: 0 });
  const call = r.toolCalls[0] as { input: unknown; invalid?: boolean };
  assert.equal(call.input, '{"code": "export def');
  assert.equal(call.invalid, true);
  assert.notEqual(fake.requests.at(-1)?.body.stream, true);
});

test("an exhausted script answers 500 naming the FAKE, so over-calling tests fail", async () => {
  assert.equal(fake.remaining(), 0);
  const err = await generateText({ model: model(), prompt: "go", maxRetries: 0 }).catch((e: Error) => e);
  assert.match(String((err as Error).message), /FAKE script exhausted/);
  assert.equal(fake.requests.at(-1)?.cue, -1);
});

test("each request records when it arrived and the fake's own time to answer it, delay included", async () => {
  fake.push({ kind: "text", text: "late", delayMs: 60 }, { kind: "text", text: "at once" });
  const rounds: number[] = [];
  for (let i = 0; i < 2; i++) {
    const sentAt = Date.now();
    const began = performance.now();
    await generateText({ model: model(), prompt: "go", maxRetries: 0 });
    rounds.push(performance.now() - began);
    const r = fake.requests.at(-1);
    assert.ok(r && r.receivedAt >= sentAt && r.receivedAt <= Date.now(), "arrival between send and answer");
  }
  const [late, now] = fake.requests.slice(-2).map((r) => r.answerMs ?? Number.NaN);
  assert.ok((late ?? 0) >= 59, `the delayed answer took ${late} ms`);
  assert.ok((late ?? 0) <= (rounds[0] ?? 0), "the fake's time is part of the client's round trip");
  assert.ok(Number.isFinite(now) && (now ?? -1) >= 0, `an answer at once took ${now} ms`);
});
