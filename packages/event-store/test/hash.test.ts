import assert from "node:assert/strict";
import { test } from "node:test";
import { canonicalJson, chainEvent, eventHash } from "../src/hash.ts";

const metadata = {
  eventId: "e-1",
  occurredAt: "2026-01-02T03:04:05.000Z",
  actor: "user:ädmin",
  caller: { kind: "agent", id: "chat-1" },
  causationId: "",
  correlationId: "c",
  schemaVersion: 1,
  prevHash: "ab".repeat(32),
};

test("chainEvent gives eventHash's hash for data given as its canonical JSON text", () => {
  const samples: unknown[] = [
    null,
    0,
    -0,
    1e21,
    0.1,
    'text with \u2028 and "quotes"',
    [],
    {},
    { z: 1, a: [3, { y: true, b: null }], é: "x", "\u{1F600}": 2, "10": "n", "9": "m" },
    { deep: { deeper: { deepest: [1.5, -2, "😀"] } } },
  ];
  for (const data of samples) {
    for (const type of ["ActionSubmitted", 'Tÿpe "quoted"']) {
      assert.equal(
        chainEvent(type, canonicalJson(data), metadata).hash,
        eventHash(type, data, metadata),
        `type ${type}, data ${JSON.stringify(data)}`,
      );
    }
  }
});

test("chainEvent's metadata text is the metadata plus its hash, and a given hash is ignored", () => {
  const withHash = { ...metadata, hash: "f".repeat(64) };
  const chained = chainEvent("T", "{}", withHash);
  assert.equal(chained.hash, eventHash("T", {}, metadata));
  assert.deepEqual(JSON.parse(chained.metadataJson), { ...metadata, hash: chained.hash });
});
