/**
 * The connection-request fold (domain/connection-requests.ts) as given-events / expected-state rows: a
 * request is decided once, whatever the stream holds after the first decision; its caller comes
 * from the event's metadata; events about other requests or other things leave it alone.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { StoredEvent } from "@gatehouse/event-store";
import type { ConnectionRequest } from "@gatehouse/proto";
import { describeDecision, evolveConnectionRequests } from "../src/domain/connection-requests.ts";

let revision = 0;
function stored(type: string, data: unknown, caller?: { kind: string; id: string }): StoredEvent {
  const r = revision++;
  return {
    streamId: "workspace-w1",
    revision: r,
    globalPosition: r + 1,
    type,
    data,
    metadata: {
      eventId: `e${r}`,
      occurredAt: `2026-12-01T12:00:0${r}.000Z`,
      actor: "service:kernel",
      caller,
      causationId: "",
      correlationId: "",
      schemaVersion: 1,
      prevHash: "",
      hash: "",
    },
  };
}

function fold(events: StoredEvent[]): ReadonlyMap<number, ConnectionRequest> {
  return events.reduce(
    (m, e) => evolveConnectionRequests(m, e, "w1"),
    new Map() as ReadonlyMap<number, ConnectionRequest>,
  );
}

const rows: Array<{ name: string; given: () => StoredEvent[]; expect: Partial<ConnectionRequest> }> = [
  {
    name: "a request is pending, stamped with the caller of its event",
    given: () => [
      stored(
        "ConnectionRequested",
        { url: "mcp://files", reason: "docs", gatekeeper: "mcp" },
        { kind: "agent", id: "c1" },
      ),
    ],
    expect: {
      requestId: 0,
      state: "pending",
      url: "mcp://files",
      caller: { kind: "agent", id: "c1" },
      gatekeeper: "mcp",
    },
  },
  {
    name: "accepted: binding, accepted url, who and when",
    given: () => [
      stored("ConnectionRequested", { url: "mcp://files", reason: "docs", gatekeeper: "mcp" }),
      stored("ResourceIntroduced", { binding: "FILES", url: "mcp://files#tool=a" }),
      stored("ConnectionAccepted", {
        requestId: 0,
        binding: "FILES",
        url: "mcp://files#tool=a",
        decidedBy: "ann",
      }),
    ],
    expect: {
      state: "accepted",
      binding: "FILES",
      acceptedUrl: "mcp://files#tool=a",
      decidedBy: "ann",
      decidedAt: "2026-12-01T12:00:02.000Z",
    },
  },
  {
    name: "a decline after an accept changes nothing (decided once)",
    given: () => [
      stored("ConnectionRequested", { url: "mcp://files", reason: "docs", gatekeeper: "mcp" }),
      stored("ConnectionAccepted", { requestId: 0, binding: "FILES", url: "mcp://files", decidedBy: "ann" }),
      stored("ConnectionDeclined", { requestId: 0, decidedBy: "bob", reason: "no" }),
    ],
    expect: { state: "accepted", decidedBy: "ann", declineReason: "" },
  },
  {
    name: "declined: the reason; an accept after it changes nothing",
    given: () => [
      stored("ConnectionRequested", { url: "mcp://memory", reason: "plan", gatekeeper: "mcp" }),
      stored("ConnectionDeclined", { requestId: 0, decidedBy: "bob", reason: "not here" }),
      stored("ConnectionAccepted", {
        requestId: 0,
        binding: "MEMORY",
        url: "mcp://memory",
        decidedBy: "ann",
      }),
    ],
    expect: { state: "declined", decidedBy: "bob", declineReason: "not here", binding: "" },
  },
  {
    name: "a decision for another request id leaves it pending",
    given: () => [
      stored("ConnectionRequested", { url: "mcp://files", reason: "docs", gatekeeper: "mcp" }),
      stored("ConnectionDeclined", { requestId: 7, decidedBy: "bob", reason: "no" }),
    ],
    expect: { state: "pending", decidedBy: "" },
  },
];

for (const row of rows) {
  test(`connection requests: ${row.name}`, () => {
    revision = 0;
    const request = fold(row.given()).get(0);
    assert.ok(request, "request 0 exists");
    for (const [key, value] of Object.entries(row.expect))
      assert.deepEqual(request[key as keyof ConnectionRequest], value, key);
  });
}

test("a refusal of a second decision names the first", () => {
  revision = 0;
  const [accepted] = [
    ...fold([
      stored("ConnectionRequested", { url: "mcp://files", reason: "docs", gatekeeper: "mcp" }),
      stored("ConnectionAccepted", { requestId: 0, binding: "FILES", url: "mcp://files", decidedBy: "ann" }),
    ]).values(),
  ];
  assert.equal(describeDecision(accepted!), "accepted as FILES by ann at 2026-12-01T12:00:01.000Z");
});
