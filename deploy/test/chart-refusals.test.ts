/**
 * Bad values are refused at render, naming the key: a wrong type, an unknown key, a gatekeeper replica
 * count above one (values.schema.json); a missing required value or secret, an event-store URL holding
 * a password, and more than one kernel/approval/worker on a store that cannot take them (fail).
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

test("replicas the gatekeepers cannot take are refused by the schema naming the component", async () => {
  for (const c of ["gatekeeperMcp", "gatekeeperGit", "gatekeeperPostgres"]) {
    await refused([], [`${c}.replicas=2`], new RegExp(`/${c}/replicas.*maximum: got 2, want 1`));
  }
  const scaled = await template(["minimal.yaml"], ["gateway.replicas=3", "sandboxRunner.replicas=4"]);
  assert.ok(scaled.ok, `gateway and sandbox runner scale horizontally: ${scaled.stderr}`);
});

test("eventStore.backend=sqlite: more than one kernel, approval or worker is refused naming the replicas and the backend", async () => {
  const err = await refused(
    ["approval-replicas-2.yaml"],
    [],
    /approval\.replicas: 2 with eventStore\.backend=sqlite: the embedded store is one SQLite file/,
  );
  assert.match(err, /set approval\.replicas=1, or eventStore\.backend=postgres to run more/);
  for (const c of ["kernel", "worker"]) {
    await refused([], [`${c}.replicas=2`], new RegExp(`${c}\\.replicas: 2 with eventStore\\.backend=sqlite`));
  }
  const all = await refused(
    [],
    ["kernel.replicas=2", "approval.replicas=3", "worker.replicas=4"],
    /3 value\(s\) to fix/,
  );
  for (const c of ["kernel", "approval", "worker"]) assert.match(all, new RegExp(`- ${c}\\.replicas: `), c);
  const one = await template(["minimal.yaml"], ["approval.replicas=1", "worker.replicas=0"]);
  assert.ok(one.ok, one.stderr);
});

test("eventStore.backend=postgres: a URL holding a password is refused naming eventStore.existingSecret, without echoing the password", async () => {
  for (const url of [
    "postgres://gatehouse:s3cret-pw@pg.db:5432/gatehouse",
    "postgresql://gatehouse@pg.db/gatehouse?sslmode=require&password=s3cret-pw",
  ]) {
    const err = await refused(
      [],
      ["eventStore.backend=postgres", `eventStore.url=${url}`],
      /eventStore\.url: holds a password/,
    );
    assert.match(err, /name it with eventStore\.existingSecret\.name/);
    assert.doesNotMatch(err, /s3cret-pw/, "the password is not in the message");
  }
  const plain = await template(
    ["minimal.yaml"],
    [
      "eventStore.backend=postgres",
      "eventStore.url=postgres://gatehouse@pg.db:5432/gatehouse?sslmode=require",
    ],
  );
  assert.ok(plain.ok, `a URL without a password is allowed inline: ${plain.stderr}`);
});

test("eventStore.backend=postgres or kurrentdb without url or existingSecret is refused naming the value, with the other missing values", async () => {
  for (const backend of ["postgres", "kurrentdb"]) {
    await refused(
      [],
      [`eventStore.backend=${backend}`],
      new RegExp(
        `\\n {2}- eventStore\\.existingSecret\\.name: eventStore\\.backend=${backend} needs the database's URL`,
      ),
    );
  }
  const none = await template([], ["eventStore.backend=postgres"]);
  assert.equal(none.ok, false);
  assert.match(none.stderr, /5 required value\(s\) missing or incomplete/);
  assert.match(none.stderr, /eventStore\.url to a URL without a password/);
});

test("eventStore: both url and existingSecret, a URL of another backend, a key left empty, a URL with backend sqlite are each named", async () => {
  const err = await refused(
    ["postgres-secret.yaml"],
    ["eventStore.url=mysql://gatehouse@db/gatehouse", "eventStore.existingSecret.key="],
    /eventStore \(backend postgres\): 3 value\(s\) to fix/,
  );
  assert.match(err, /eventStore\.url and eventStore\.existingSecret\.name: set one of them, not both/);
  assert.match(err, /eventStore\.url: does not start with postgres:\/\/ or postgresql:\/\//);
  assert.match(err, /eventStore\.existingSecret\.key: name the key/);
  await refused(
    [],
    ["eventStore.url=postgres://gatehouse@pg.db/gatehouse"],
    /eventStore\.backend: is sqlite .* set eventStore\.backend=postgres/,
  );
  await refused(
    [],
    ["eventStore.backend=mysql"],
    /\/eventStore\/backend.*value must be one of 'sqlite', 'postgres', 'kurrentdb'/,
  );
  await refused(
    [],
    ["eventStore.existingSecret.nam=x"],
    /\/eventStore\/existingSecret.*additional properties 'nam' not allowed/,
  );
});

test("eventStore.backend=kurrentdb: more than one kernel, approval or worker is refused (postgres only)", async () => {
  await refused(
    [],
    ["eventStore.backend=kurrentdb", "eventStore.url=kurrentdb://kdb.db:2113", "approval.replicas=2"],
    /approval\.replicas: 2 with eventStore\.backend=kurrentdb: .*only with eventStore\.backend=postgres/,
  );
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

test("gatekeeperPostgres.enabled without a registry, or without the databases its NetworkPolicy may reach, fails naming the value", async () => {
  await refused(
    [],
    ["gatekeeperPostgres.enabled=true", "networkPolicy.gatekeeperPostgres.databases[0].cidr=10.0.3.7/32"],
    /gatekeeperPostgres\.registry\.servers: gatekeeperPostgres\.enabled needs the PostgreSQL servers .*gatekeeperPostgres\.registry\.existingSecret/,
  );
  const err = await refused(
    ["postgres-gatekeeper.yaml"],
    ["networkPolicy.gatekeeperPostgres.databases=null"],
    /networkPolicy\.gatekeeperPostgres\.databases: gatekeeperPostgres\.enabled with the NetworkPolicies on: list the PostgreSQL servers' addresses/,
  );
  assert.match(err, /or set networkPolicy\.enabled=false/);
  const open = await template(
    ["minimal.yaml", "postgres-gatekeeper.yaml"],
    [
      "networkPolicy.gatekeeperPostgres.databases=null",
      "networkPolicy.enabled=false",
      "unsafeAcknowledgeWeakenedSandbox=true",
    ],
  );
  assert.ok(open.ok, `no policies: no database addresses needed: ${open.stderr}`);
});

test("gatekeeperPostgres: a passwordFile outside the mounted directory, or one missing from passwords.files, fails naming both keys", async () => {
  await refused(
    ["postgres-gatekeeper.yaml"],
    ["gatekeeperPostgres.registry.servers.crm.readRole.passwordFile=/run/secrets/crm-read"],
    /gatekeeperPostgres\.registry\.servers\.crm\.readRole\.passwordFile: password files live under \/etc\/gatehouse\/postgres-passwords\//,
  );
  await refused(
    ["postgres-gatekeeper.yaml"],
    ["gatekeeperPostgres.passwords.files=null"],
    /gatekeeperPostgres\.passwords\.files\.crm-read: gatekeeperPostgres\.registry\.servers\.crm\.readRole\.passwordFile names it/,
  );
  const given = await template(
    ["minimal.yaml", "postgres-gatekeeper.yaml"],
    ["gatekeeperPostgres.passwords.files=null", "gatekeeperPostgres.passwords.existingSecret=pg-passwords"],
  );
  assert.ok(given.ok, given.stderr);
});

test("gatekeeperPostgres: an inline password, a role with both or neither password source, an unknown server key and a bad CIDR are refused by the schema naming the key", async () => {
  const err = await refused(
    ["postgres-gatekeeper.yaml"],
    ["gatekeeperPostgres.registry.servers.crm.readRole.password=s3cret-inline"],
    /\/gatekeeperPostgres\/registry\/servers\/crm\/readRole.*additional properties 'password' not allowed/,
  );
  assert.doesNotMatch(err, /s3cret-inline/, "the password is not echoed");
  // Both passwordFile and passwordEnv.
  await refused(
    ["postgres-gatekeeper.yaml"],
    [
      "gatekeeperPostgres.registry.servers.crm.writeRole.passwordFile=/etc/gatehouse/postgres-passwords/crm-read",
    ],
    /\/gatekeeperPostgres\/registry\/servers\/crm\/writeRole': 'oneOf' failed/,
  );
  // Neither.
  const neither = await refused(
    ["postgres-gatekeeper.yaml"],
    [
      "gatekeeperPostgres.registry.servers.ops.host=ops-db",
      "gatekeeperPostgres.registry.servers.ops.databases={ops}",
      "gatekeeperPostgres.registry.servers.ops.readRole.user=gatehouse_read",
      "gatekeeperPostgres.registry.servers.ops.writeRole.user=gatehouse_write",
      "gatekeeperPostgres.registry.servers.ops.writeRole.passwordEnv=OPS_WRITE_PASSWORD",
    ],
    /\/gatekeeperPostgres\/registry\/servers\/ops\/readRole': 'oneOf' failed/,
  );
  assert.match(neither, /missing property 'passwordFile'/);
  await refused(
    ["postgres-gatekeeper.yaml"],
    ["gatekeeperPostgres.registry.servers.crm.hots=db"],
    /\/gatekeeperPostgres\/registry\/servers\/crm.*additional properties 'hots' not allowed/,
  );
  await refused(
    ["postgres-gatekeeper.yaml"],
    ["gatekeeperPostgres.registry.servers.CRM.host=db"],
    /\/gatekeeperPostgres\/registry\/servers/,
  );
  await refused(
    ["postgres-gatekeeper.yaml"],
    ["networkPolicy.gatekeeperPostgres.databases[0].cidr=crm-db.internal"],
    /\/networkPolicy\/gatekeeperPostgres\/databases\/0\/cidr.*does not match pattern/,
  );
});
