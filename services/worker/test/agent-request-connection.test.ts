/**
 * request_connection in the built-in agent, without a stack: its arguments are checked like the MCP
 * tool's (same schema), a call that cannot be sent names its problem and the shape to send, it runs
 * no snippet (no execution id), and the prompt and tool list tell the model when to use it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connectionRequestArgs } from "@gatehouse/agent-mcp";
import { systemPrompt } from "../src/agent/prompt.ts";
import {
  checkConnectionCall,
  requestConnectionInputSchema,
  requestConnectionToolDescription,
} from "../src/agent/request-connection.ts";
import { checkToolCall, executionIdOf } from "../src/agent/tool-call.ts";
import { agentTools } from "../src/agent/tools.ts";

test("request_connection's arguments: a new request or a request id; anything else names the problem and the shape", () => {
  assert.deepEqual(checkConnectionCall('{"url": "mcp://files", "reason": "to read specs"}'), {
    args: { url: "mcp://files", reason: "to read specs" },
    problem: "",
  });
  assert.deepEqual(checkConnectionCall('{"request_id": 7}').args, { request_id: 7 });
  const cases: Array<[string, RegExp]> = [
    ['{"url": "mcp://files"', /not valid JSON; call request_connection again with \{"url"/],
    ['{"url": "mcp://files"}', /reason is required with url/],
    ['{"reason": "why"}', /Give either url and reason .* or request_id/],
    ['{"url": "mcp://files", "reason": "r", "request_id": 3}', /Give either url and reason/],
    ['{"request_id": "seven"}', /Invalid arguments for request_connection: .*request_id/s],
    ['{"url": "", "reason": "r"}', /Invalid arguments for request_connection: .*url/s],
    ["[1]", /Invalid arguments for request_connection/],
  ];
  for (const [json, problem] of cases) {
    const checked = checkConnectionCall(json);
    assert.equal(checked.args, undefined, json);
    assert.match(checked.problem, problem, json);
    assert.equal(checkToolCall("request_connection", json).problem, checked.problem, json);
  }
});

test("a request_connection call runs no snippet: no execution id, valid or not; executeCode keeps <turn>.<step>.<n>", () => {
  const ok = checkToolCall("request_connection", '{"url": "mcp://files", "reason": "r"}');
  assert.equal(ok.problem, "");
  assert.equal(executionIdOf("request_connection", ok, "t1", 2, 0), "");
  const run = checkToolCall("executeCode", '{"code": "export default async () => 1"}');
  assert.equal(executionIdOf("executeCode", run, "t1", 2, 1), "t1.2.1");
  assert.match(checkToolCall("shell", "{}").problem, /call executeCode .* or request_connection/);
});

test("the model is offered both tools; request_connection's schema is the MCP tool's arguments, without its wait", () => {
  const tools = agentTools("interface Env {\n}\n", 0);
  assert.deepEqual(Object.keys(tools), ["executeCode", "request_connection"]);
  const schema = requestConnectionInputSchema as { properties: Record<string, { description?: string }> };
  assert.deepEqual(Object.keys(schema.properties).sort(), ["reason", "request_id", "url"]);
  assert.equal("$schema" in schema, false, "no dialect line: some providers refuse it");
  assert.equal(
    schema.properties.url?.description,
    connectionRequestArgs.shape.url.description,
    "the same description text as the MCP tool",
  );
  const description = requestConnectionToolDescription("executeCode");
  assert.match(description, /Nothing is\nconnected until a person accepts/);
  assert.match(description, /does not wait/);
  assert.doesNotMatch(description, /timeout_seconds|progress/);
  const prompt = systemPrompt("interface Env {\n}\n", 0);
  assert.match(
    prompt,
    /has no binding for .* call request_connection with \{"url": \.\.\., "reason": \.\.\.\}/s,
  );
  assert.match(prompt, /a person must accept it before it exists/);
});
