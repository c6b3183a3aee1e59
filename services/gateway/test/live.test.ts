/**
 * The SSE hub with two publishers on the bus (two approval replicas each publish every event's notice):
 * a client gets each event's notice once, in order, whatever the interleaving.
 */
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { test } from "node:test";
import { InProcessNoticeBus } from "@gatehouse/live-notices";
import { SseHub } from "../src/live.ts";
import { createMetrics } from "../src/metrics.ts";

/** A ServerResponse stand-in that keeps what the hub writes. */
class FakeResponse extends EventEmitter {
  written = "";
  writeHead(): this {
    return this;
  }
  write(chunk: string): boolean {
    this.written += chunk;
    return true;
  }
  end(): void {}
}

const noticesIn = (text: string) =>
  [...text.matchAll(/^event: notice\ndata: (.+)$/gm)].map((m) => JSON.parse(m[1] as string));

test("each event's notice reaches a client once when two publishers send it: duplicates and late copies are dropped", async () => {
  const bus = new InProcessNoticeBus();
  const hub = new SseHub(bus, createMetrics(), {
    workspacesOf: async () => ["w1", "w2"],
    membersOf: async () => ({ owner: "user:a", members: [] }),
  });
  const res = new FakeResponse();
  try {
    hub.attach(res as unknown as ServerResponse, "user:a", new Set(["w1", "w2"]));
    const n = (workspaceId: string, revision: number) =>
      bus.publish({ workspaceId, revision, type: "ActionSubmitted" });
    // Publisher 1 runs ahead of publisher 2; both send w1's revisions 1..3 and w2's revision 1.
    n("w1", 1);
    n("w1", 2);
    n("w1", 1);
    n("w2", 1);
    n("w1", 3);
    n("w1", 2);
    n("w2", 1);
    n("w1", 3);
    assert.deepEqual(
      noticesIn(res.written).map((x) => `${x.workspaceId}@${x.revision}`),
      ["w1@1", "w1@2", "w2@1", "w1@3"],
    );
  } finally {
    hub.close();
  }
});

test("notice → browser latency is observed once per notice written to a browser, from the notice's publishedAtMs", async () => {
  const bus = new InProcessNoticeBus();
  const metrics = createMetrics();
  const hub = new SseHub(bus, metrics, {
    workspacesOf: async () => ["w1"],
    membersOf: async () => ({ owner: "user:a", members: [] }),
  });
  const count = async () =>
    (await metrics.noticeDeliverySeconds.get()).values.find(
      (v) => v.metricName === "gatehouse_gateway_notice_delivery_seconds_count",
    )?.value ?? 0;
  const sum = async () =>
    (await metrics.noticeDeliverySeconds.get()).values.find(
      (v) => v.metricName === "gatehouse_gateway_notice_delivery_seconds_sum",
    )?.value ?? 0;
  try {
    // No browser reaches w2: nothing is sent, nothing observed.
    bus.publish({ workspaceId: "w2", revision: 1, type: "ActionSubmitted", publishedAtMs: Date.now() });
    assert.equal(await count(), 0);
    const [one, two] = [new FakeResponse(), new FakeResponse()];
    hub.attach(one as unknown as ServerResponse, "user:a", new Set(["w1"]));
    hub.attach(two as unknown as ServerResponse, "user:a", new Set(["w1"]));
    // Published 2 s ago (as the approval service stamped it): one observation of about 2 s for two browsers.
    bus.publish({
      workspaceId: "w1",
      revision: 1,
      type: "ActionSubmitted",
      publishedAtMs: Date.now() - 2000,
    });
    assert.equal(await count(), 1);
    assert.ok((await sum()) >= 2 && (await sum()) < 3, `observed ${await sum()} s`);
    // A notice without a publication time (an older publisher) is delivered, not observed.
    bus.publish({ workspaceId: "w1", revision: 2, type: "ActionSubmitted" });
    assert.equal(noticesIn(one.written).length, 2);
    assert.equal(await count(), 1);
  } finally {
    hub.close();
  }
});

test("chat deltas go as chat-delta events, in order, only to people who reach the chat's workspace", async () => {
  const bus = new InProcessNoticeBus();
  const hub = new SseHub(bus, createMetrics(), {
    workspacesOf: async (person) => (person === "user:a" ? ["w1"] : ["w2"]),
    membersOf: async () => ({ owner: "user:a", members: [] }),
  });
  const [a, b] = [new FakeResponse(), new FakeResponse()];
  const deltasIn = (text: string) =>
    [...text.matchAll(/^event: chat-delta\ndata: (.+)$/gm)].map((m) => JSON.parse(m[1] as string));
  try {
    hub.attach(a as unknown as ServerResponse, "user:a", new Set(["w1"]));
    hub.attach(b as unknown as ServerResponse, "user:b", new Set(["w2"]));
    const d = (seq: number, text: string) => ({
      workspaceId: "w1",
      chatId: "c",
      turnId: "t",
      step: 1,
      seq,
      text,
    });
    bus.publishChatDelta(d(0, "Hel"));
    bus.publishChatDelta(d(1, "lo"));
    assert.deepEqual(deltasIn(a.written), [d(0, "Hel"), d(1, "lo")]);
    assert.deepEqual(deltasIn(b.written), [], "user:b does not reach w1");
    assert.equal(noticesIn(a.written).length, 0, "a delta is not a notice");
  } finally {
    hub.close();
  }
});
