import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import {
  Client,
  connectivityState,
  credentials,
  Metadata,
  Server,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import {
  callUnary,
  listenGrpc,
  PEER_CHANNEL_OPTIONS,
  peerReady,
  peerWaitMs,
  stopGrpc,
  waitUntil,
} from "../src/index.ts";

test("listenGrpc binds a free port and stopGrpc releases it", async () => {
  const server = new Server();
  const port = await listenGrpc(server, "127.0.0.1", 0);
  assert.ok(port > 0);
  await stopGrpc(server);
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen(port, "127.0.0.1", () => resolve());
  });
  probe.close();
});

test("listenGrpc rejects a port already in use", async () => {
  const first = new Server();
  const port = await listenGrpc(first, "127.0.0.1", 0);
  await assert.rejects(listenGrpc(new Server(), "127.0.0.1", port));
  await stopGrpc(first);
});

test("PEER_CHANNEL_OPTIONS: a peer that keeps failing is retried at least every 6 s, not at grpc-js's growing waits (up to 120 s)", async () => {
  // A peer that accepts TCP and hangs up at once (a pod on its way up): each connection attempt of
  // the channel is one accepted socket. Calls go on every 200 ms, as a busy gateway's would.
  const attempts: number[] = [];
  const peer = createServer((socket) => {
    attempts.push(performance.now());
    socket.destroy();
  });
  await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", () => resolve()));
  const port = (peer.address() as { port: number }).port;
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), PEER_CHANNEL_OPTIONS);
  const start = performance.now();
  const call = () =>
    new Promise<void>((resolve) =>
      client.makeUnaryRequest(
        "/gatehouse.test.Peer/Ping",
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        new Metadata(),
        { deadline: Date.now() + 1000 },
        () => resolve(),
      ),
    );
  try {
    while (performance.now() - start < 22_000) {
      await call();
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    client.close();
    peer.close();
  }
  // With grpc-js's defaults (1 s x1.6, jittered) the attempts fall near 1, 2.6, 5.2, 9.3, 15.8 and
  // 26.3 s: one at most in the last 10 s. Capped at 5 s (jitter 20 %) there is one every 6 s or less.
  const late = attempts.filter((t) => t - start >= 12_000);
  assert.ok(late.length >= 2, `attempts at ${attempts.map((t) => Math.round(t - start)).join(", ")} ms`);
  for (let i = 1; i < late.length; i++) assert.ok(late[i]! - late[i - 1]! <= 6_500);
});

const PING = {
  path: "/gatehouse.test.Peer/Ping",
  requestStream: false,
  responseStream: false,
  requestSerialize: (b: Buffer) => b,
  requestDeserialize: (b: Buffer) => b,
  responseSerialize: (b: Buffer) => b,
  responseDeserialize: (b: Buffer) => b,
} as const;
/** Ping as a UnaryMethod of a plain grpc-js Client (what a generated client's method is). */
function ping(
  this: Client,
  req: Buffer,
  md: Metadata,
  opts: object,
  cb: (e: ServiceError | null, r: Buffer) => void,
) {
  return this.makeUnaryRequest(
    PING.path,
    PING.requestSerialize,
    PING.responseDeserialize,
    req,
    md,
    opts,
    (e, r) => cb(e, r ?? Buffer.alloc(0)),
  );
}

test("callUnary waits for a peer that came back while its channel was between reconnect attempts; a peer still down fails with UNAVAILABLE", async () => {
  // A free port, then nothing listening on it: the channel's first attempt is refused.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  // 3 s between attempts, so the call below is made while the channel waits (grpc-js fails it at once).
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), {
    "grpc.initial_reconnect_backoff_ms": 3000,
    "grpc.max_reconnect_backoff_ms": 3000,
  });
  try {
    const down = performance.now();
    await assert.rejects(callUnary(client, ping, Buffer.alloc(0), 1000), (e: ServiceError) => {
      assert.equal(e.code, status.UNAVAILABLE);
      return true;
    });
    assert.ok(performance.now() - down < 10_000);
    // Held between attempts now, as after a peer's restart. The peer comes back; the next call is answered.
    assert.equal(client.getChannel().getConnectivityState(false), connectivityState.TRANSIENT_FAILURE);
    // A short call made now waits half its time for a reconnect, then gets the peer's own status,
    // UNAVAILABLE, not a DEADLINE_EXCEEDED of a deadline the wait used up.
    await assert.rejects(callUnary(client, ping, Buffer.alloc(0), 400), (e: ServiceError) => {
      assert.equal(e.code, status.UNAVAILABLE, e.message);
      return true;
    });
    const server = new Server();
    server.addService(
      { Ping: PING },
      { Ping: (_call: unknown, cb: (e: null, r: Buffer) => void) => cb(null, Buffer.from("pong")) },
    );
    await listenGrpc(server, "127.0.0.1", port);
    try {
      const answer = await callUnary(client, ping, Buffer.alloc(0), 30_000);
      assert.equal(answer.toString(), "pong");
    } finally {
      await stopGrpc(server);
    }
  } finally {
    client.close();
  }
});

/** A Ping server on `port` (0: a free one); resolves with it and its bound port. */
async function pingServer(port: number): Promise<{ server: Server; port: number }> {
  const server = new Server();
  server.addService(
    { Ping: PING },
    { Ping: (_call: unknown, cb: (e: null, r: Buffer) => void) => cb(null, Buffer.from("pong")) },
  );
  return { server, port: await listenGrpc(server, "127.0.0.1", port) };
}

test("callUnary: a steady stream of calls while the peer restarts (stopped, refusing connections, then back on its port) is answered in full, none failing with UNAVAILABLE", async () => {
  const first = await pingServer(0);
  const port = first.port;
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), PEER_CHANNEL_OPTIONS);
  const outcomes: string[] = [];
  const calls: Promise<void>[] = [];
  let calling = true;
  // One call every 50 ms, as a gateway's requests would come, each with the gateway's 30 s deadline.
  const loop = (async () => {
    while (calling) {
      calls.push(
        callUnary(client, ping, Buffer.alloc(0), 30_000).then(
          (r) => void outcomes.push(r.toString()),
          (e: ServiceError) => void outcomes.push(`error ${e.code}: ${e.details}`),
        ),
      );
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  let second: Awaited<ReturnType<typeof pingServer>> | undefined;
  let madeWhileDown = 0;
  try {
    await waitUntil("answers from the first server", () => outcomes.length >= 3);
    // The peer stops as a pod does on SIGTERM: no new calls, in-flight ones finish.
    await stopGrpc(first.server);
    const callsAtStop = calls.length;
    // Down until the channel has had a connection refused (nothing listens on the port).
    await waitUntil(
      "a refused reconnect",
      () => client.getChannel().getConnectivityState(false) === connectivityState.TRANSIENT_FAILURE,
      { timeoutMs: 30_000, intervalMs: 5 },
    );
    const sentWhileDown = calls.length;
    await waitUntil("more calls made while the peer is down", () => calls.length >= sentWhileDown + 5);
    madeWhileDown = calls.length - callsAtStop;
    second = await pingServer(port);
    const answeredBefore = outcomes.length;
    await waitUntil("answers from the restarted peer", () => outcomes.length >= answeredBefore + 10, {
      timeoutMs: 30_000,
    });
  } finally {
    calling = false;
    await loop;
    await Promise.all(calls);
    client.close();
    if (second) await stopGrpc(second.server);
  }
  const failed = outcomes.filter((o) => o !== "pong");
  assert.deepEqual(failed, [], `${failed.length} of ${outcomes.length} calls failed`);
  assert.equal(outcomes.length, calls.length, "every call settled");
  assert.ok(madeWhileDown >= 5, `${madeWhileDown} calls made while the peer was down`);
});

test("peerWaitMs: the call's time less 5 s, at least half of it", () => {
  assert.equal(peerWaitMs(30_000), 25_000);
  assert.equal(peerWaitMs(60_000), 55_000);
  assert.equal(peerWaitMs(2_000), 1_000);
});

test("peerReady: true at once on a READY channel, false after maxMs for a peer that is down", async () => {
  const { server, port } = await pingServer(0);
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), PEER_CHANNEL_OPTIONS);
  try {
    assert.equal(await peerReady(client, 30_000), true);
    assert.equal(client.getChannel().getConnectivityState(false), connectivityState.READY);
    await stopGrpc(server);
    const t0 = performance.now();
    assert.equal(await peerReady(client, 300), false);
    assert.ok(performance.now() - t0 >= 250, "waited about maxMs");
  } finally {
    client.close();
  }
  assert.equal(await peerReady(client, 300), false, "a closed client is never ready");
});
