/**
 * gatekeeperKindFor: every scheme of GATEKEEPER_SCHEMES maps to its gatekeeper; another is refused listing
 * them all. GatekeeperClients: a kind with no address is refused saying how to configure it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { NoGatekeeperForResource } from "../src/domain/errors.ts";
import { GatekeeperClients, gatekeeperKindFor } from "../src/gatekeepers.ts";

test("each served scheme maps to its gatekeeper; an unsupported scheme is refused listing every served one", () => {
  assert.deepEqual(
    [
      "mcp://files",
      "https://host/mcp",
      "http://127.0.0.1:9/mcp",
      "git+file:///srv/r.git",
      "git+https://h/o/r.git",
      "git+ssh://git@h/o/r.git",
      "git+http://127.0.0.1:9/r.git",
      "postgres://crm/crm",
      "postgres://crm/crm#schema=public",
      "postgres://crm/crm#table=public.orders&table=public.customers",
    ].map(gatekeeperKindFor),
    ["mcp", "mcp", "mcp", "git", "git", "git", "git", "postgres", "postgres", "postgres"],
  );
  for (const url of ["ftp://example.com/x", "git+ftp://h/r.git", "postgresql://crm/crm"]) {
    assert.throws(
      () => gatekeeperKindFor(url),
      (e: Error) => {
        assert.ok(e instanceof NoGatekeeperForResource);
        for (const scheme of [
          "mcp://",
          "https://",
          "git+file://",
          "git+https://",
          "git+ssh://",
          "postgres://",
        ]) {
          assert.ok(e.message.includes(scheme), `${scheme} is listed in: ${e.message}`);
        }
        assert.match(e.message, /postgres:\/\/<registered server>\/<database>/);
        return true;
      },
    );
  }
});

test("a kind with no address is refused naming GATEKEEPER_ADDRESSES, or the hint given for that kind", () => {
  const clients = new GatekeeperClients(
    { mcp: "127.0.0.1:9" },
    { postgres: "start gatehouse dev with --postgres-registry <file>" },
  );
  try {
    assert.ok(clients.get("mcp"), "a configured kind gets a client");
    assert.throws(
      () => clients.get("postgres"),
      (e: Error) =>
        e instanceof NoGatekeeperForResource &&
        e.message ===
          "the postgres gatekeeper is not configured; start gatehouse dev with --postgres-registry <file>",
    );
    assert.throws(
      () => clients.get("git"),
      (e: Error) =>
        e instanceof NoGatekeeperForResource &&
        e.message ===
          "the git gatekeeper is not configured; set GATEKEEPER_ADDRESSES to include git=host:port",
    );
    // A kind named like an Object.prototype member is not "configured" by it.
    assert.throws(() => clients.get("toString"), NoGatekeeperForResource);
  } finally {
    clients.close();
  }
});
