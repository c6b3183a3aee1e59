/**
 * Bad values are refused at render, naming the key: a wrong type, an unknown key, a replica count the
 * embedded event store cannot take (values.schema.json), and a missing required value or secret (fail).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { template } from "./helm.ts";

/** Renders with `files` (after the minimal values) and asserts it is refused with a message matching `named`. */
async function refused(files: string[], sets: string[], named: RegExp): Promise<string> {
  const r = await template(["minimal.yaml", ...files], sets);
  assert.equal(r.ok, false, `expected a refusal, got a render of ${r.stdout.length} bytes`);
  assert.match(r.stderr, named);
  return r.stderr;
}

test("a value of the wrong type is refused naming the key", async () => {
  const err = await refused(["wrong-type.yaml"], [], /\/gateway\/replicas/);
  assert.match(err, /got string, want integer/);
});

test("an unknown key is refused naming it", async () => {
  await refused(["unknown-key.yaml"], [], /\/gateway.*additional properties 'replica' not allowed/);
  await refused([], ["kernal.replicas=1"], /additional properties 'kernal' not allowed/);
});

test("replicas the embedded event store cannot take are refused naming the component", async () => {
  await refused(["approval-replicas-2.yaml"], [], /\/approval\/replicas.*maximum: got 2, want 1/);
  for (const c of ["kernel", "worker", "gatekeeperMcp", "gatekeeperGit"]) {
    await refused([], [`${c}.replicas=2`], new RegExp(`/${c}/replicas.*maximum: got 2, want 1`));
  }
  const scaled = await template(["minimal.yaml"], ["gateway.replicas=3", "sandboxRunner.replicas=4"]);
  assert.ok(scaled.ok, `gateway and sandbox runner scale horizontally: ${scaled.stderr}`);
});

test("a missing required value fails the render naming it", async () => {
  const none = await template([], []);
  assert.equal(none.ok, false);
  assert.match(none.stderr, /temporal\.address: set the Temporal frontend/);
  await refused([], ["nats.url="], /nats\.url: set the NATS server/);
  await refused(
    [],
    ["auth.devTokens.tokens=null", "tests.snippet.enabled=false"],
    /auth\.oidc\.issuer: people cannot sign in/,
  );
  await refused([], ["auth.oidc.issuer=https://sso.example.com"], /auth\.oidc\.audience/);
});

test("every missing required value is named in one render, not one per run", async () => {
  const none = await template([], []);
  assert.equal(none.ok, false);
  assert.match(none.stderr, /4 required value\(s\) missing or incomplete/);
  for (const key of ["temporal.address", "nats.url", "auth.oidc.issuer", "tests.snippet.tokenSecret.name"]) {
    assert.match(none.stderr, new RegExp(`\\n {2}- ${key.replaceAll(".", "\\.")}: `), key);
  }
});

test("a missing required secret fails the render naming the value", async () => {
  await refused(
    [],
    ["callerToken.generate=false"],
    /callerToken\.value: the caller-token secret is required/,
  );
  await refused([], ["callerToken.value=short"], /callerToken\.value: must be at least 32 characters/);
  await refused(
    ["git-remote-missing-credential.yaml"],
    [],
    /gatekeeperGit\.credentials\.files\.platform-token: gatekeeperGit\.remotes\.rules\[0\]\.tokenFile names it/,
  );
  const given = await template(
    ["minimal.yaml", "git-remote-missing-credential.yaml"],
    ["gatekeeperGit.credentials.existingSecret=git-creds"],
  );
  assert.ok(given.ok, given.stderr);
});

test("TLS enabled without its Secret, or half a client pair, fails the render naming the value", async () => {
  await refused(
    [],
    ["temporal.tls.enabled=true"],
    /temporal\.tls\.existingSecret: TLS is enabled: name the Secret/,
  );
  await refused([], ["nats.tls.enabled=true"], /nats\.tls\.existingSecret: TLS is enabled/);
  await refused(
    [],
    ["nats.tls.enabled=true", "nats.tls.existingSecret=n", "nats.tls.keyKey="],
    /nats\.tls\.certKey and nats\.tls\.keyKey: set both/,
  );
  await refused(
    [],
    ["temporal.tls.enable=true"],
    /\/temporal\/tls.*additional properties 'enable' not allowed/,
  );
  await refused([], ["temporal.tls.serverName=bad name"], /\/temporal\/tls\/serverName/);
  await refused(
    [],
    ["nats.tls.serverName=n.example"],
    /\/nats\/tls.*additional properties 'serverName' not allowed/,
  );
});

test("sandbox: a bad backend, an unknown key or a bad CPU quantity is refused naming the key", async () => {
  await refused(
    [],
    ["sandbox.backend=pods"],
    /\/sandbox\/backend.*value must be one of 'runner-pod', 'kubernetes'/,
  );
  await refused(
    [],
    ["sandbox.kubernetes.namspace=x"],
    /\/sandbox\/kubernetes.*additional properties 'namspace' not allowed/,
  );
  await refused(
    [],
    ["sandbox.kubernetes.resources.limits.cpu=1 core"],
    /\/sandbox\/kubernetes\/resources\/limits\/cpu.*does not match pattern/,
  );
  await refused(
    [],
    ["networkPolicy.apiServer.cidr=10.0.0.1/32"],
    /\/networkPolicy\/apiServer.*additional properties 'cidr' not allowed/,
  );
});

test("sandbox.backend=kubernetes with the NetworkPolicies on and no API server address fails naming networkPolicy.apiServer.cidrs and where to find it", async () => {
  const err = await refused([], ["sandbox.backend=kubernetes"], /networkPolicy\.apiServer\.cidrs: /);
  assert.match(err, /kubectl get endpointslices -n default -l kubernetes\.io\/service-name=kubernetes/);
  const given = await template(["minimal.yaml", "kubernetes-backend.yaml"], []);
  assert.ok(given.ok, given.stderr);
});

test("sandbox.backend=kubernetes: the release namespace, no RuntimeClass and requests above limits are each named, in one render", async () => {
  const err = await refused(
    ["kubernetes-backend.yaml"],
    [
      "sandbox.kubernetes.namespace=gh",
      "runtimeClass.name=",
      "sandbox.kubernetes.resources.requests.memoryMb=4096",
      "sandbox.kubernetes.resources.requests.cpu=1500m",
    ],
    /4 value\(s\) to fix/,
  );
  assert.match(err, /sandbox\.kubernetes\.namespace: must not be the release namespace \(gh\).*Secrets/);
  assert.match(err, /sandbox\.kubernetes\.runtimeClassName: .*gVisor/);
  assert.match(
    err,
    /sandbox\.kubernetes\.resources\.requests\.memoryMb: 4096 is above limits\.memoryMb \(2560\)/,
  );
  assert.match(err, /sandbox\.kubernetes\.resources\.requests\.cpu: 1500m is above limits\.cpu \(1\)/);
});
