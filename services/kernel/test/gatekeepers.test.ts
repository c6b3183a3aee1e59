/** gatekeeperKindFor: every scheme of GATEKEEPER_SCHEMES maps to its gatekeeper; another is refused listing them all. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { NoGatekeeperForResource } from "../src/domain/errors.ts";
import { gatekeeperKindFor } from "../src/gatekeepers.ts";

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
    ].map(gatekeeperKindFor),
    ["mcp", "mcp", "mcp", "git", "git", "git", "git"],
  );
  for (const url of ["ftp://example.com/x", "git+ftp://h/r.git"]) {
    assert.throws(
      () => gatekeeperKindFor(url),
      (e: Error) => {
        assert.ok(e instanceof NoGatekeeperForResource);
        for (const scheme of ["mcp://", "https://", "git+file://", "git+https://", "git+ssh://"]) {
          assert.ok(e.message.includes(scheme), `${scheme} is listed in: ${e.message}`);
        }
        return true;
      },
    );
  }
});
