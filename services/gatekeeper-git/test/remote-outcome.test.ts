/**
 * git's stderr texts mapped to the apply outcome taxonomy (remote-outcome.ts): only texts printed
 * while connecting are "not sent"; anything after the pack's request may have been sent.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { GitFailed } from "../src/git.ts";
import { classifyRemoteFailure, remoteBudget } from "../src/remote-outcome.ts";

const push = (stderr: string, exitCode: number | null = 128) => new GitFailed(["push"], exitCode, stderr);

test("texts printed while connecting are not sent, with their cause", () => {
  const cases: [string, string][] = [
    [
      "fatal: unable to access 'https://git.example.com/x.git/': Could not resolve host: git.example.com",
      "dns",
    ],
    ["ssh: Could not resolve hostname git.example.com: Name or service not known", "dns"],
    [
      "fatal: unable to access 'http://127.0.0.1:9/x.git/': Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
      "refused",
    ],
    ["ssh: connect to host git.example.com port 22: Connection refused", "refused"],
    [
      "fatal: unable to access 'https://10.9.9.9/x.git/': Failed to connect to 10.9.9.9 port 443 after 3001 ms: Timeout was reached",
      "connect-timeout",
    ],
    ["fatal: unable to access 'https://h/x.git/': SSL certificate problem: self-signed certificate", "tls"],
    ["Host key verification failed.", "tls"],
    [
      "fatal: unable to access 'https://h/x.git/': Failed to connect to h port 443: No route to host",
      "unreachable",
    ],
  ];
  for (const [stderr, cause] of cases) {
    const f = classifyRemoteFailure(push(stderr));
    assert.equal(f.kind, "not-sent", stderr);
    assert.equal(f.kind === "not-sent" && f.fault.cause, cause, stderr);
  }
});

test("answers: a moved branch, a declined push, refused credentials", () => {
  assert.equal(classifyRemoteFailure(push(" ! [rejected]        main -> main (stale info)")).kind, "moved");
  assert.equal(classifyRemoteFailure(push(" ! [rejected]        main -> main (fetch first)")).kind, "moved");
  const declined = classifyRemoteFailure(
    push(
      "remote: frozen for release\nTo http://h/x.git\n ! [remote rejected] main -> main (pre-receive hook declined)",
    ),
  );
  assert.deepEqual(declined, { kind: "refused", why: "remote: frozen for release" });
  assert.equal(
    classifyRemoteFailure(push("fatal: Authentication failed for 'https://h/x.git/'")).kind,
    "refused",
  );
});

test("anything after the pack's request may have been sent: the remote hung up, RPC failed, a timeout, an unknown text", () => {
  for (const stderr of [
    "error: RPC failed; curl 52 Empty reply from server\nfatal: the remote end hung up unexpectedly",
    "error: RPC failed; curl 7 Failed to connect to h port 443: Connection refused",
    "fatal: early EOF",
    "send-pack: unexpected disconnect while reading sideband packet",
    "something git never said",
  ]) {
    const f = classifyRemoteFailure(push(stderr));
    assert.equal(f.kind, "unclear", stderr);
    assert.equal(f.kind === "unclear" && f.fault.sent, true);
  }
  const killed = classifyRemoteFailure(push("", null));
  assert.deepEqual(killed, { kind: "unclear", fault: { sent: true, cause: "timeout", detail: "" } });
});

test("the remote budget leaves time for the read after an unclear push, within the caller's deadline", () => {
  assert.deepEqual(remoteBudget(Infinity, 60_000), { pushMs: 60_000, readMs: 10_000 });
  const b = remoteBudget(Date.now() + 10_000, 60_000);
  assert.ok(b.pushMs + b.readMs <= 10_000 && b.readMs >= 1000 && b.pushMs >= 7000, JSON.stringify(b));
  assert.deepEqual(remoteBudget(Date.now() - 5, 60_000), { pushMs: 1000, readMs: 1000 });
});
