/**
 * The gateway's 400 message for a body that fails its schema names the unknown fields of a strict
 * object, alongside the schema's own hint, and keeps each other issue's path.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SendMessageBody, StartChatBody } from "@gatehouse/gateway-contract";
import type { ZodError } from "zod";
import { zodErrorMessage } from "../src/zod-message.ts";

function messageOf(schema: { safeParse(v: unknown): { error?: ZodError } }, body: unknown): string {
  const { error } = schema.safeParse(body);
  assert.ok(error, "the body should have been refused");
  return zodErrorMessage(error);
}

test("an unknown field is named, with the schema's example", () => {
  assert.equal(
    messageOf(SendMessageBody, { text: "hi", foo: 1 }),
    'unknown field "foo"; send a JSON object, e.g. {"text": "list the open issues"}',
  );
  assert.equal(messageOf(StartChatBody, { a: 1, b: 2 }), 'unknown fields "a", "b"; send a JSON object: {}');
});

test("other issues keep their path; a body that is not an object gets the schema's hint alone", () => {
  assert.equal(messageOf(SendMessageBody, { text: 5 }), "text: text must be a string");
  assert.equal(
    messageOf(SendMessageBody, ["hi"]),
    'send a JSON object, e.g. {"text": "list the open issues"}',
  );
});
