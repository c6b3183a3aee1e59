/** describeGrpcError: what the CLI says for UNAVAILABLE, depending on who said it. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { describeGrpcError } from "../src/clients.ts";

test("UNAVAILABLE sent by the service passes its own message on; a dropped call says it may have taken effect", () => {
  const fromService = describeGrpcError(
    {
      code: 14,
      details:
        "the event store cannot be reached; nothing was recorded, retry the request (see the kernel's logs)",
    },
    "kernel",
  );
  assert.match(fromService, /the kernel service at .* cannot do this now: .*nothing was recorded, retry/);
  assert.doesNotMatch(fromService, /partly taken effect/);
  const dropped = describeGrpcError({ code: 14, details: "Connection dropped" }, "kernel");
  assert.match(
    dropped,
    /stopped answering during the call \(Connection dropped\); it may have partly taken effect/,
  );
});
