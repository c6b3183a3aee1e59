import assert from "node:assert/strict";
import { test } from "node:test";
import { CallerTokenInvalid, mintCallerToken, verifyCallerToken } from "../src/index.ts";

const secret = "s".repeat(32);
const claims = {
  workspaceId: "ws1",
  binding: "MEMORY",
  caller: { kind: "agent" as const, id: "chat-1" },
  executionId: "ex1",
};

test("a minted token verifies and yields its claims", () => {
  const got = verifyCallerToken(secret, mintCallerToken(secret, claims));
  assert.equal(got.workspaceId, "ws1");
  assert.deepEqual(got.caller, { kind: "agent", id: "chat-1" });
});

test("a token signed with another secret is refused", () => {
  const forged = mintCallerToken("x".repeat(32), claims);
  assert.throws(() => verifyCallerToken(secret, forged), CallerTokenInvalid);
});

test("a token whose claims were edited is refused", () => {
  const [p, body, mac] = mintCallerToken(secret, claims).split(".");
  const edited = JSON.parse(Buffer.from(body!, "base64url").toString());
  edited.workspaceId = "other";
  const tampered = `${p}.${Buffer.from(JSON.stringify(edited)).toString("base64url")}.${mac}`;
  assert.throws(() => verifyCallerToken(secret, tampered), /signature/);
});

test("an expired token is refused", () => {
  const t = mintCallerToken(secret, claims, 10, Date.now() - 20_000);
  assert.throws(() => verifyCallerToken(secret, t), /expired/);
});

test("a short secret is refused with the variable to set", () => {
  assert.throws(() => mintCallerToken("short", claims), /GATEHOUSE_CALLER_TOKEN_SECRET/);
});
