/**
 * The chart's optional gatekeeper-postgres renders as issue 17 asks (no cluster needed): off by
 * default; when enabled a Deployment and Service with the registry and password files from Secrets,
 * postgres= in GATEKEEPER_ADDRESSES, and a NetworkPolicy whose egress reaches only the listed databases.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parse } from "yaml";
import { envVar, find, type K8sObject, peers, podFiles, render } from "./helm.ts";

const name = (c: string) => `t-gatehouse-${c}`;

function gatekeeperAddresses(objects: K8sObject[]): string {
  const values = ["kernel", "approval", "worker"].map(
    (c) => envVar(objects, c, "GATEKEEPER_ADDRESSES")?.value,
  );
  assert.equal(new Set(values).size, 1, `one GATEKEEPER_ADDRESSES: ${values}`);
  return values[0] as string;
}

test("gatekeeper-postgres is off by default: none of its objects, and no postgres= in GATEKEEPER_ADDRESSES", async () => {
  const objects = await render(["minimal.yaml"], ["serviceMonitor.enabled=true"]);
  assert.deepEqual(
    objects
      .filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === "gatekeeper-postgres")
      .map((o) => `${o.kind}/${o.metadata.name}`),
    [],
  );
  assert.equal(
    gatekeeperAddresses(objects),
    "mcp=t-gatehouse-gatekeeper-mcp:7003,git=t-gatehouse-gatekeeper-git:7005",
  );
  const healthz = find(objects, "Pod", "t-gatehouse-test-healthz");
  assert.doesNotMatch(JSON.stringify(healthz), /gatekeeper-postgres/);
});

test("gatekeeperPostgres.enabled: a Deployment and Service on 7007/9407 with the registry from the chart's Secret, password files mounted read-only, env wired, and postgres= in GATEKEEPER_ADDRESSES", async () => {
  const objects = await render(["minimal.yaml", "postgres-gatekeeper.yaml"], ["serviceMonitor.enabled=true"]);
  const c = "gatekeeper-postgres";
  const d = find(objects, "Deployment", name(c));
  assert.equal(d.spec.replicas, 1);
  assert.equal(d.spec.strategy.type, "Recreate", "one instance: the old pod stops first");
  const pod = d.spec.template.spec;
  const [container] = pod.containers;
  assert.equal(container.image, "gatehouse/services:0.1.0");
  assert.deepEqual(container.args, ["gatekeeper-postgres"]);
  assert.equal(pod.automountServiceAccountToken, false);
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  assert.deepEqual(container.securityContext.capabilities, { drop: ["ALL"] });
  for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
    assert.deepEqual(container[probe].httpGet, { path: "/healthz", port: "ops" }, probe);
  }
  assert.deepEqual(
    container.ports.map((p: { name: string; containerPort: number }) => [p.name, p.containerPort]),
    [
      ["grpc", 7007],
      ["ops", 9407],
    ],
  );
  const svc = find(objects, "Service", name(c));
  assert.deepEqual(svc.spec.selector, d.spec.selector.matchLabels);
  assert.deepEqual(
    svc.spec.ports.map((p: { name: string; port: number }) => [p.name, p.port]),
    [
      ["grpc", 7007],
      ["ops", 9407],
    ],
  );
  const { env, source } = podFiles(objects, c);
  assert.equal(env.GATEKEEPER_POSTGRES_ADDR, "0.0.0.0:7007");
  assert.equal(env.GATEKEEPER_POSTGRES_METRICS_ADDR, "0.0.0.0:9407");
  assert.equal(env.APPROVAL_ADDRESS, "t-gatehouse-approval:7002");
  assert.equal(env.SANDBOX_MAX_FRAME_BYTES, "1048576", "the runners' frame cap");
  assert.deepEqual(source(env.GATEKEEPER_POSTGRES_REGISTRY as string), {
    secret: "t-gatehouse-postgres-registry",
    key: "registry.yaml",
    readOnly: true,
  });
  // extraEnv carries the variable a role's passwordEnv names, from the administrator's Secret.
  assert.deepEqual(envVar(objects, c, "CRM_WRITE_PASSWORD")?.valueFrom, {
    secretKeyRef: { name: "crm-write", key: "password" },
  });
  // The registry Secret holds the servers as given (no password, only the file path and the variable name).
  const registry = find(objects, "Secret", "t-gatehouse-postgres-registry") as K8sObject & {
    stringData: Record<string, string>;
  };
  const parsed = parse(registry.stringData["registry.yaml"] as string);
  assert.deepEqual(parsed.servers.crm.readRole, {
    user: "gatehouse_read",
    passwordFile: "/etc/gatehouse/postgres-passwords/crm-read",
  });
  assert.deepEqual(parsed.servers.crm.databases, ["crm", "crm_staging"]);
  assert.doesNotMatch(registry.stringData["registry.yaml"] as string, /read-pw-from-values/);
  // The password file is in the chart's passwords Secret, mounted read-only (0400) where passwordFile points.
  const passwords = find(objects, "Secret", "t-gatehouse-postgres-passwords") as K8sObject & {
    stringData: Record<string, string>;
  };
  assert.deepEqual(passwords.stringData, { "crm-read": "read-pw-from-values" });
  const volume = pod.volumes.find((v: { name: string }) => v.name === "passwords");
  assert.deepEqual(volume.secret, { secretName: "t-gatehouse-postgres-passwords", defaultMode: 0o400 });
  const mount = container.volumeMounts.find((m: { name: string }) => m.name === "passwords");
  assert.deepEqual(mount, {
    name: "passwords",
    mountPath: "/etc/gatehouse/postgres-passwords",
    readOnly: true,
  });
  assert.equal(
    gatekeeperAddresses(objects),
    "mcp=t-gatehouse-gatekeeper-mcp:7003,git=t-gatehouse-gatekeeper-git:7005,postgres=t-gatehouse-gatekeeper-postgres:7007",
  );
  find(objects, "PodDisruptionBudget", name(c));
  find(objects, "ServiceMonitor", name(c));
  const healthz = find(objects, "Pod", "t-gatehouse-test-healthz");
  assert.match(
    JSON.stringify(healthz),
    /gatekeeper-postgres=http:\/\/t-gatehouse-gatekeeper-postgres:9407\/healthz/,
  );
  // A changed registry rolls the pod.
  const changed = await render(
    ["minimal.yaml", "postgres-gatekeeper.yaml"],
    ["gatekeeperPostgres.registry.servers.crm.statementTimeoutMs=9000"],
  );
  assert.notEqual(
    find(changed, "Deployment", name(c)).spec.template.metadata.annotations["checksum/config"],
    d.spec.template.metadata.annotations["checksum/config"],
  );
});

test("gatekeeperPostgres with existing Secrets: the chart renders neither Secret and mounts the named ones", async () => {
  const objects = await render(
    ["minimal.yaml"],
    [
      "gatekeeperPostgres.enabled=true",
      "gatekeeperPostgres.registry.existingSecret=company-pg-registry",
      "gatekeeperPostgres.registry.existingSecretKey=servers.yaml",
      "gatekeeperPostgres.passwords.existingSecret=company-pg-passwords",
      "networkPolicy.gatekeeperPostgres.databases[0].cidr=10.0.3.0/24",
    ],
  );
  assert.deepEqual(
    objects
      .filter((o) => o.kind === "Secret" && /postgres/.test(o.metadata.name))
      .map((o) => o.metadata.name),
    [],
  );
  const { env, source, volumes } = podFiles(objects, "gatekeeper-postgres");
  assert.deepEqual(source(env.GATEKEEPER_POSTGRES_REGISTRY as string), {
    secret: "company-pg-registry",
    key: "servers.yaml",
    readOnly: true,
  });
  assert.ok(volumes.includes("passwords"));
  const pod = find(objects, "Deployment", name("gatekeeper-postgres")).spec.template.spec;
  assert.equal(
    pod.volumes.find((v: { name: string }) => v.name === "passwords").secret.secretName,
    "company-pg-passwords",
  );
  // Without password files (roles by passwordEnv only) no passwords volume is mounted.
  const envOnly = await render(
    ["minimal.yaml"],
    [
      "gatekeeperPostgres.enabled=true",
      "gatekeeperPostgres.registry.existingSecret=company-pg-registry",
      "networkPolicy.gatekeeperPostgres.databases[0].cidr=10.0.3.0/24",
    ],
  );
  assert.equal(podFiles(envOnly, "gatekeeper-postgres").volumes.includes("passwords"), false);
});

test("gatekeeper-postgres NetworkPolicy: ingress from kernel, approval and worker; egress only to approval, DNS and the listed databases; its callers may reach it", async () => {
  const objects = await render(["minimal.yaml", "postgres-gatekeeper.yaml"]);
  const np = find(objects, "NetworkPolicy", name("gatekeeper-postgres"));
  assert.deepEqual(np.spec.policyTypes, ["Ingress", "Egress"]);
  assert.deepEqual(
    { from: peers(np.spec.ingress, "from"), to: peers(np.spec.egress, "to") },
    { from: ["approval", "kernel", "worker"], to: ["approval"] },
  );
  const external = (np.spec.egress as { to?: { ipBlock?: unknown }[]; ports?: unknown }[]).filter((r) =>
    r.to?.some((p) => p.ipBlock),
  );
  assert.deepEqual(external, [
    { to: [{ ipBlock: { cidr: "10.0.3.7/32" } }], ports: [{ port: 6432, protocol: "TCP" }] },
    { to: [{ ipBlock: { cidr: "10.0.4.0/24" } }], ports: [{ port: 5432, protocol: "TCP" }] },
  ]);
  // Every egress rule names its destination: nothing open to "anywhere on a port".
  for (const rule of np.spec.egress as { to?: unknown[] }[]) assert.ok(rule.to?.length, JSON.stringify(rule));
  assert.equal(np.spec.egress.length, 4, "approval, DNS and the two databases");
  for (const c of ["kernel", "approval", "worker"]) {
    const policy = find(objects, "NetworkPolicy", name(c));
    assert.ok(peers(policy.spec.egress, "to").includes("gatekeeper-postgres"), `${c} reaches it`);
  }
  const approval = find(objects, "NetworkPolicy", name("approval"));
  assert.ok(peers(approval.spec.ingress, "from").includes("gatekeeper-postgres"), "it reaches approval");
  // Off by default: nobody gets a rule to it.
  const plain = await render(["minimal.yaml"]);
  for (const o of plain.filter((x) => x.kind === "NetworkPolicy")) {
    assert.doesNotMatch(JSON.stringify(o.spec), /gatekeeper-postgres/, o.metadata.name);
  }
});
