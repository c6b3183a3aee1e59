import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { AuthenticatorChain } from "../src/auth/chain.ts";
import { DevTokenAuthenticator } from "../src/auth/dev-tokens.ts";
import { OidcAuthenticator } from "../src/auth/oidc.ts";
import { Forbidden, Unauthenticated } from "../src/auth/person.ts";
import { startTestIssuer, type TestIssuer } from "./test-issuer.ts";

let issuer: TestIssuer;
before(async () => {
  issuer = await startTestIssuer("gatehouse");
});
after(async () => issuer.close());

test("an OIDC token signed by the issuer's published key is accepted, with its roles mapped (keys found by discovery)", async () => {
  const auth = new OidcAuthenticator({
    issuer: issuer.issuer,
    audience: "gatehouse",
    rolesClaim: "groups",
    roleMap: { "eng-approvers": "approver", sec: "auditor" },
  });
  const token = await issuer.sign({
    sub: "u1",
    email: "ann@example.com",
    groups: ["eng-approvers", "sec", "unrelated"],
  });
  const person = await auth.authenticate(token);
  assert.deepEqual(person, { subject: "u1", name: "ann@example.com", roles: ["approver", "auditor"] });
});

test("expired, wrong-audience, wrong-issuer and foreign-key tokens are refused with the reason", async () => {
  const auth = new OidcAuthenticator({
    issuer: issuer.issuer,
    audience: "gatehouse",
    jwksUrl: issuer.jwksUrl,
  });
  const cases: Array<[Promise<string>, RegExp]> = [
    [issuer.sign({ sub: "u", roles: ["approver"] }, { expiresIn: "-5m" }), /expired/],
    [issuer.sign({ sub: "u", roles: ["approver"] }, { audience: "other-app" }), /claim "aud"/],
    [issuer.sign({ sub: "u", roles: ["approver"] }, { issuer: "https://evil.example" }), /claim "iss"/],
    [
      issuer.sign({ sub: "u", roles: ["approver"] }, { key: "other" }),
      /no key of the issuer matches|signature/,
    ],
    [Promise.resolve("not-a-jwt"), /well-formed/],
  ];
  for (const [tokenP, reason] of cases) {
    const token = await tokenP;
    await assert.rejects(
      auth.authenticate(token),
      (err: Error) => err instanceof Unauthenticated && reason.test(err.message),
    );
  }
});

test("a valid token without a Gatehouse role is forbidden, naming the claim to fix", async () => {
  const auth = new OidcAuthenticator({ issuer: issuer.issuer, audience: "gatehouse" });
  const token = await issuer.sign({ sub: "u2", roles: ["viewer"] });
  await assert.rejects(
    auth.authenticate(token),
    (err: Error) =>
      err instanceof Forbidden &&
      /"roles" claim must contain one of approver, auditor, admin/.test(err.message),
  );
});

test("dev tokens and OIDC work side by side; an unknown token is refused", async () => {
  const chain = new AuthenticatorChain([
    new DevTokenAuthenticator([
      { token: "dev-token-0123456789", subject: "dev-auditor", roles: ["auditor"] },
    ]),
    new OidcAuthenticator({ issuer: issuer.issuer, audience: "gatehouse" }),
  ]);
  assert.deepEqual((await chain.authenticate("dev-token-0123456789")).roles, ["auditor"]);
  const token = await issuer.sign({ sub: "u3", roles: "admin" });
  assert.deepEqual((await chain.authenticate(token)).roles, ["admin"]);
  await assert.rejects(chain.authenticate("dev-token-0123456780"), Unauthenticated);
});

test("an unreachable issuer refuses tokens with a clear reason instead of accepting them", async () => {
  const auth = new OidcAuthenticator({ issuer: "http://127.0.0.1:1", audience: "gatehouse" });
  const token = await issuer.sign({ sub: "u", roles: ["admin"] });
  await assert.rejects(
    auth.authenticate(token),
    (err: Error) => err instanceof Unauthenticated && /discovery document/.test(err.message),
  );
});
