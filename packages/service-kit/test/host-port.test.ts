import assert from "node:assert/strict";
import { test } from "node:test";
import { hostPort, splitHostPort } from "../src/index.ts";

test("host:port: names, IPv4 and bracketed IPv6 pass; a missing port, a bare IPv6 or a port over 65535 fail", () => {
  const schema = hostPort("127.0.0.1:7004");
  for (const ok of ["127.0.0.1:7004", "localhost:0", "[::1]:7004", "svc.ns.svc.cluster.local:443"]) {
    assert.equal(schema.safeParse(ok).success, true, ok);
  }
  for (const bad of ["127.0.0.1", "::1:7004", "host:99999", "a b:1", ":7004"]) {
    const r = schema.safeParse(bad);
    assert.equal(r.success, false, bad);
    assert.match(r.error!.issues[0]!.message, /host:port, e\.g\. 127\.0\.0\.1:7004|at most 65535/);
  }
  assert.deepEqual(splitHostPort("[::1]:7004"), { host: "::1", port: 7004 });
  assert.deepEqual(splitHostPort("127.0.0.1:0"), { host: "127.0.0.1", port: 0 });
});
