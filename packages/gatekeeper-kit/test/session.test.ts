import assert from "node:assert/strict";
import { after, test } from "node:test";
import { waitUntil } from "@gatehouse/service-kit";
import { status } from "@grpc/grpc-js";
import { RpcTarget } from "capnweb";
import { InvalidRequest, UnknownAction } from "../src/errors.ts";
import { connectSession } from "../src/session-client.ts";
import { checkOpenFields } from "../src/session-open.ts";
import { startSessionServer } from "./helpers.ts";

const OPEN = {
  workspaceId: "ws-1",
  binding: "REPO",
  url: "test://repo",
  trust: "",
  callerToken: "gh1.token.not-a-secret",
  executionId: "exec-1",
};

class Counter extends RpcTarget {
  #n = 0;
  inc(by: number): number {
    this.#n += by;
    return this.#n;
  }
}

class Repo extends RpcTarget {
  readonly binding: string;
  constructor(binding: string) {
    super();
    this.binding = binding;
  }
  whoAmI(): string {
    return this.binding;
  }
  counter(): Counter {
    return new Counter();
  }
  missing(): never {
    throw new UnknownAction("action 7 is not an action of this binding");
  }
  crash(): never {
    throw new Error("/secret/path/to/token leaked");
  }
}

const opened: string[] = [];
let live = 0;
const srv = await startSessionServer({
  async start(open) {
    checkOpenFields(open);
    if (open.url === "test://refuse") throw new InvalidRequest("open.url test://refuse is not allowed here");
    opened.push(open.binding);
    return new Repo(open.binding);
  },
  onSessionChange: (d) => {
    live += d;
  },
});
after(() => srv.close());

test("a session's main object is the gatekeeper's RpcTarget, and objects it returns stay callable", async () => {
  const s = connectSession<Repo>(srv.client.openSession(), OPEN);
  try {
    assert.equal(await s.stub.whoAmI(), "REPO");
    const counter = s.stub.counter();
    assert.equal(await counter.inc(2), 2);
    assert.equal(await counter.inc(3), 5);
    assert.equal(live, 1);
  } finally {
    s.close();
  }
  // The server sees the stream end a little later (a busy machine may take seconds): wait for it.
  await waitUntil("the server to count the closed session", () => live === 0);
  assert.equal(live, 0);
});

test("errors reaching the caller are redacted: domain errors keep their message, others become generic", async () => {
  const s = connectSession<Repo>(srv.client.openSession(), OPEN);
  try {
    await assert.rejects(Promise.resolve(s.stub.missing()), (e: Error) => {
      assert.match(e.message, /action 7 is not an action of this binding/);
      // The stack the caller gets is the error's first line only: no frames, no gatekeeper paths.
      assert.equal(e.stack, `UnknownAction: ${e.message}`);
      return true;
    });
    await assert.rejects(Promise.resolve(s.stub.crash()), (e: Error) => {
      assert.match(e.message, /internal gatekeeper error; the call was not completed/);
      assert.doesNotMatch(e.message, /secret/);
      assert.equal(e.stack, `InternalError: ${e.message}`);
      return true;
    });
    const any = s.stub as unknown as Record<string, () => Promise<unknown>>;
    await assert.rejects(
      Promise.resolve(any.deleteEverything!()),
      /'deleteEverything' is not a method of this binding/,
    );
  } finally {
    s.close();
  }
});

test("a refused open ends the stream with the error's status and serves nothing", async () => {
  const before = opened.length;
  const s = connectSession<Repo>(srv.client.openSession(), { ...OPEN, url: "test://refuse" });
  await assert.rejects(Promise.resolve(s.stub.whoAmI()));
  assert.equal(s.errors[0]?.code, status.INVALID_ARGUMENT);
  assert.match(s.errors[0]?.details ?? "", /open\.url test:\/\/refuse/);
  assert.equal(opened.length, before);
  s.close();
});

test("an open with an empty field or a bad binding name is refused naming the field", async () => {
  const s = connectSession<Repo>(srv.client.openSession(), { ...OPEN, callerToken: "" });
  await assert.rejects(Promise.resolve(s.stub.whoAmI()));
  assert.match(s.errors[0]?.details ?? "", /open\.callerToken is empty/);
  s.close();
  assert.throws(() => checkOpenFields({ ...OPEN, binding: "repo" }), /open\.binding "repo" must match/);
  assert.throws(() => checkOpenFields({ ...OPEN, trust: "admin" }), /open\.trust "admin"/);
});

test("a stream whose first message is a frame, not open, is refused with INVALID_ARGUMENT", async () => {
  const stream = srv.client.openSession();
  const err = await new Promise<{ code?: number; details?: string }>((resolve) => {
    stream.on("error", resolve);
    stream.on("data", () => {});
    stream.write({ msg: { $case: "frame", frame: '["pull",1]' } });
  });
  assert.equal(err.code, status.INVALID_ARGUMENT);
  assert.match(err.details ?? "", /first OpenSession message must be `open`/);
});

test("a second open on the same stream is refused", async () => {
  const s = connectSession<Repo>(srv.client.openSession(), OPEN);
  assert.equal(await s.stub.whoAmI(), "REPO");
  const stream = srv.client.openSession();
  const err = await new Promise<{ code?: number; details?: string }>((resolve) => {
    stream.on("error", resolve);
    stream.on("data", () => {});
    stream.write({ msg: { $case: "open", open: OPEN } });
    stream.write({ msg: { $case: "open", open: OPEN } });
  });
  assert.equal(err.code, status.INVALID_ARGUMENT);
  assert.match(err.details ?? "", /may be sent only once/);
  s.close();
});
