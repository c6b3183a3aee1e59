/**
 * The chart renders what issue 14 asks for (no cluster needed): `helm lint`; every service a Deployment
 * with /healthz probes and a PodSecurity-restricted securityContext; the sandbox runner under gVisor;
 * NetworkPolicies allowing exactly the flows between services; the event store's claim kept on uninstall,
 * or with an external event store (eventStore.backend) its URL from a Secret and no claim.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CHART,
  COMPONENTS,
  envVar,
  find,
  helm,
  type K8sObject,
  KUBE_VERSION,
  peers,
  podFiles,
  render,
  template,
  valuesFile,
} from "./helm.ts";

const name = (c: string) => `t-gatehouse-${c}`;

test("helm lint passes on the chart with the minimal values", async () => {
  const r = await helm([
    "lint",
    CHART,
    "--strict",
    "--kube-version",
    KUBE_VERSION,
    "-f",
    valuesFile("minimal.yaml"),
  ]);
  assert.ok(r.ok, r.stdout + r.stderr);
  assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
});

test("every service is a Deployment with /healthz probes and a restricted securityContext, and a Service where it listens", async () => {
  const objects = await render(["minimal.yaml"]);
  for (const c of COMPONENTS) {
    const d = find(objects, "Deployment", name(c));
    const pod = d.spec.template.spec;
    assert.equal(pod.automountServiceAccountToken, false, `${c}: no service-account token`);
    assert.equal(pod.securityContext.runAsNonRoot, true, c);
    assert.equal(pod.securityContext.seccompProfile.type, "RuntimeDefault", c);
    const [container] = pod.containers;
    assert.deepEqual(container.securityContext.capabilities, { drop: ["ALL"] }, c);
    assert.equal(container.securityContext.allowPrivilegeEscalation, false, c);
    assert.equal(container.securityContext.readOnlyRootFilesystem, true, c);
    for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
      assert.deepEqual(container[probe].httpGet, { path: "/healthz", port: "ops" }, `${c} ${probe}`);
    }
    assert.ok(
      container.ports.some((p: { name: string }) => p.name === "ops"),
      `${c} has an ops port`,
    );
    const svc = find(objects, "Service", name(c));
    assert.deepEqual(svc.spec.selector, d.spec.selector.matchLabels, `${c}: Service selects its pods`);
  }
});

test("the sandbox runner runs under the gvisor RuntimeClass, which the chart creates with handler runsc", async () => {
  const objects = await render(["minimal.yaml"]);
  const pod = find(objects, "Deployment", name("sandbox-runner")).spec.template.spec;
  assert.equal(pod.runtimeClassName, "gvisor");
  assert.equal(pod.containers[0].image, "gatehouse/sandbox:0.1.0");
  const rc = find(objects, "RuntimeClass", "gvisor");
  assert.equal(rc.handler, "runsc");
  const named = await render(
    ["minimal.yaml"],
    ["runtimeClass.create=false", "runtimeClass.name=gvisor-sandboxed"],
  );
  assert.equal(
    named.some((o) => o.kind === "RuntimeClass"),
    false,
  );
  assert.equal(
    find(named, "Deployment", name("sandbox-runner")).spec.template.spec.runtimeClassName,
    "gvisor-sandboxed",
  );
});

test("kernel, approval and worker share the event store claim, kept on uninstall, on one node; one replica each", async () => {
  const objects = await render(["minimal.yaml"]);
  const pvc = find(objects, "PersistentVolumeClaim", "t-gatehouse-data");
  assert.equal(pvc.metadata.annotations?.["helm.sh/resource-policy"], "keep");
  for (const c of ["kernel", "approval", "worker"]) {
    const d = find(objects, "Deployment", name(c));
    assert.equal(d.spec.replicas, 1);
    assert.equal(d.spec.strategy.type, "Recreate", `${c}: never two writers during a rollout`);
    const pod = d.spec.template.spec;
    const data = pod.volumes.find((v: { name: string }) => v.name === "data");
    assert.equal(data.persistentVolumeClaim.claimName, "t-gatehouse-data", c);
    const env = Object.fromEntries(
      pod.containers[0].env.map((e: { name: string; value?: string }) => [e.name, e.value]),
    );
    assert.equal(env.GATEHOUSE_DATA_DIR, "/data", c);
    const term = pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0];
    assert.equal(term.topologyKey, "kubernetes.io/hostname", c);
    assert.equal(d.spec.template.metadata.labels["gatehouse.dev/event-store"], "embedded", c);
  }
});

test("eventStore.backend=postgres with existingSecret: EVENT_STORE_URL from the Secret in kernel, approval and worker; no claim, no /data, no same-node rule; several replicas", async () => {
  const objects = await render(
    ["minimal.yaml", "postgres-secret.yaml"],
    ["approval.replicas=3", "worker.replicas=2", "kernel.replicas=2"],
  );
  assert.equal(
    objects.some((o) => o.kind === "PersistentVolumeClaim"),
    false,
    "no claim for the event store",
  );
  const replicas: Record<string, number> = { kernel: 2, approval: 3, worker: 2 };
  for (const c of ["kernel", "approval", "worker"]) {
    assert.deepEqual(
      envVar(objects, c, "EVENT_STORE_URL"),
      {
        name: "EVENT_STORE_URL",
        valueFrom: { secretKeyRef: { name: "gatehouse-event-store", key: "url" } },
      },
      c,
    );
    assert.equal(envVar(objects, c, "GATEHOUSE_DATA_DIR"), undefined, `${c}: no data dir`);
    const d = find(objects, "Deployment", name(c));
    assert.equal(d.spec.replicas, replicas[c], c);
    assert.equal(
      d.spec.strategy.type,
      "RollingUpdate",
      `${c}: a rolling update (two processes on PostgreSQL are safe)`,
    );
    const pod = d.spec.template.spec;
    assert.deepEqual(
      pod.volumes.map((v: { name: string }) => v.name),
      ["tmp"],
      `${c}: no data volume`,
    );
    assert.deepEqual(
      pod.containers[0].volumeMounts.map((m: { mountPath: string }) => m.mountPath),
      ["/tmp"],
      c,
    );
    assert.equal(pod.affinity, undefined, `${c}: no same-node rule`);
    assert.equal(d.spec.template.metadata.labels["gatehouse.dev/event-store"], undefined, c);
    // The database is reachable through the NetworkPolicy: PostgreSQL's default port.
    const np = find(objects, "NetworkPolicy", name(c));
    assert.ok(
      np.spec.egress.some(
        (r: { to?: unknown; ports?: { port: number }[] }) =>
          r.to === undefined && r.ports?.length === 1 && r.ports[0]?.port === 5432,
      ),
      `${c}: egress to 5432`,
    );
  }
  // No plain env value anywhere holds the URL.
  for (const o of objects.filter((x) => x.kind === "ConfigMap" || x.kind === "Deployment")) {
    assert.doesNotMatch(JSON.stringify(o), /postgres(ql)?:\/\//, `${o.kind}/${o.metadata.name}`);
  }
});

test("eventStore.url without a password is a plain value; the policies open its hosts' ports (or networkPolicy.eventStore.ports) to networkPolicy.eventStore.to", async () => {
  const url = "postgres://gatehouse@pg-0.db:6543,pg-1.db/gatehouse?sslmode=require";
  const objects = await render(
    ["minimal.yaml"],
    ["eventStore.backend=postgres", `eventStore.url=${url.replace(",", "\\,")}`],
  );
  for (const c of ["kernel", "approval", "worker"]) {
    assert.deepEqual(envVar(objects, c, "EVENT_STORE_URL"), { name: "EVENT_STORE_URL", value: url }, c);
    const ports = find(objects, "NetworkPolicy", name(c)).spec.egress.flatMap(
      (r: { ports?: { port: number }[] }) => (r.ports ?? []).map((p) => p.port),
    );
    assert.ok(ports.includes(6543) && ports.includes(5432), `${c}: ${ports}`);
  }
  const pinned = await render(
    ["minimal.yaml", "postgres-secret.yaml"],
    ["networkPolicy.eventStore.ports={6432}", "networkPolicy.eventStore.to[0].ipBlock.cidr=10.0.3.7/32"],
  );
  const rule = find(pinned, "NetworkPolicy", name("worker")).spec.egress.find(
    (r: { ports?: { port: number }[] }) => r.ports?.some((p) => p.port === 6432),
  );
  assert.deepEqual(rule, {
    ports: [{ port: 6432, protocol: "TCP" }],
    to: [{ ipBlock: { cidr: "10.0.3.7/32" } }],
  });
  // The embedded store (the default) opens no database port.
  const plain = await render(["minimal.yaml"]);
  const all = plain
    .filter((o) => o.kind === "NetworkPolicy")
    .flatMap((o) => (o.spec.egress ?? []) as { ports?: { port: number }[] }[])
    .flatMap((r) => (r.ports ?? []).map((p) => p.port));
  assert.equal(all.includes(5432), false);
  for (const c of ["kernel", "approval", "worker"]) {
    assert.equal(envVar(plain, c, "EVENT_STORE_URL"), undefined, `${c}: sqlite keeps GATEHOUSE_DATA_DIR`);
  }
});

test("eventStore.backend=kurrentdb: EVENT_STORE_URL and no claim, but one replica each and Recreate", async () => {
  const objects = await render(
    ["minimal.yaml"],
    ["eventStore.backend=kurrentdb", "eventStore.url=kurrentdb://kdb.db:2113?tls=true"],
  );
  assert.equal(
    objects.some((o) => o.kind === "PersistentVolumeClaim"),
    false,
  );
  for (const c of ["kernel", "approval", "worker"]) {
    assert.equal(envVar(objects, c, "EVENT_STORE_URL")?.value, "kurrentdb://kdb.db:2113?tls=true", c);
    const d = find(objects, "Deployment", name(c));
    assert.equal(d.spec.strategy.type, "Recreate", c);
    const ports = find(objects, "NetworkPolicy", name(c)).spec.egress.flatMap(
      (r: { ports?: { port: number }[] }) => (r.ports ?? []).map((p) => p.port),
    );
    assert.ok(ports.includes(2113), `${c}: ${ports}`);
  }
});

test("every component has a PodDisruptionBudget; the ServiceMonitors render only when asked", async () => {
  const objects = await render(["minimal.yaml"]);
  for (const c of COMPONENTS) find(objects, "PodDisruptionBudget", name(c));
  assert.equal(
    objects.some((o) => o.kind === "ServiceMonitor"),
    false,
  );
  const monitored = await render(["minimal.yaml"], ["serviceMonitor.enabled=true"]);
  for (const c of COMPONENTS) find(monitored, "ServiceMonitor", name(c));
});

test("extraObjects are rendered through tpl", async () => {
  const objects = await render(["minimal.yaml", "extra-objects.yaml"]);
  find(objects, "ConfigMap", "t-extra");
  find(objects, "ConfigMap", "t-extra-string");
});

test("NetworkPolicies: default deny, then exactly the flows between services; the sandbox runner has no egress at all", async () => {
  const objects = await render(["minimal.yaml"]);
  const deny = find(objects, "NetworkPolicy", "t-gatehouse-default-deny");
  assert.deepEqual(deny.spec, { podSelector: {}, policyTypes: ["Ingress", "Egress"] });
  const expected: Record<string, { from: string[]; to: string[] }> = {
    gateway: { from: [], to: ["approval", "kernel"] },
    kernel: { from: ["gateway"], to: ["gatekeeper-git", "gatekeeper-mcp", "sandbox-runner"] },
    approval: {
      from: ["gatekeeper-git", "gatekeeper-mcp", "gateway"],
      to: ["gatekeeper-git", "gatekeeper-mcp"],
    },
    worker: { from: [], to: ["gatekeeper-git", "gatekeeper-mcp"] },
    "gatekeeper-mcp": { from: ["approval", "kernel", "worker"], to: ["approval"] },
    "gatekeeper-git": { from: ["approval", "kernel", "worker"], to: ["approval"] },
    "sandbox-runner": { from: ["kernel"], to: [] },
  };
  for (const c of COMPONENTS) {
    const np = find(objects, "NetworkPolicy", name(c)) as K8sObject;
    assert.deepEqual(np.spec.policyTypes, ["Ingress", "Egress"], c);
    assert.deepEqual(
      { from: peers(np.spec.ingress, "from"), to: peers(np.spec.egress, "to") },
      expected[c],
      `${c}'s flows`,
    );
    const dns = np.spec.egress.some((r: { ports?: { port: number }[] }) =>
      r.ports?.some((p) => p.port === 53),
    );
    assert.equal(dns, c !== "sandbox-runner", `${c}: DNS egress only where needed`);
  }
  const runner = find(objects, "NetworkPolicy", name("sandbox-runner"));
  assert.deepEqual(runner.spec.egress, [], "sandbox runner: no egress, DNS included");
  assert.equal(runner.spec.ingress.length, 1, "sandbox runner: ingress from the kernel only");
  const approval = find(objects, "NetworkPolicy", name("approval"));
  const ports = approval.spec.egress.flatMap((r: { ports?: { port: number }[] }) =>
    (r.ports ?? []).map((p) => p.port),
  );
  assert.ok(ports.includes(7233) && ports.includes(4222), `approval reaches Temporal and NATS: ${ports}`);
});

test("networkPolicy.dns.ports names the DNS pods' own port in every DNS rule (UDP and TCP)", async () => {
  const objects = await render(["minimal.yaml"], ["networkPolicy.dns.ports={5353}"]);
  const kernel = find(objects, "NetworkPolicy", name("kernel"));
  const dnsRule = kernel.spec.egress.find((r: { ports?: { port: number }[] }) =>
    r.ports?.some((p) => p.port === 5353),
  );
  assert.deepEqual(dnsRule?.ports, [
    { port: 5353, protocol: "UDP" },
    { port: 5353, protocol: "TCP" },
  ]);
  const all = objects
    .filter((o) => o.kind === "NetworkPolicy")
    .flatMap((o) => (o.spec.egress ?? []) as { ports?: { port: number }[] }[])
    .flatMap((r) => (r.ports ?? []).map((p) => p.port));
  assert.equal(all.includes(53), false, `no rule left on 53: ${all}`);
});

test("the caller-token secret is generated (48 characters) or taken from an existing Secret", async () => {
  const objects = await render(["minimal.yaml"]);
  const secret = find(objects, "Secret", "t-gatehouse-caller-token") as K8sObject & {
    data: Record<string, string>;
  };
  assert.equal(Buffer.from(secret.data["caller-token-secret"]!, "base64").length, 48);
  const existing = await render(["minimal.yaml"], ["callerToken.existingSecret=company-caller-token"]);
  assert.equal(
    existing.some((o) => o.kind === "Secret" && o.metadata.name === "t-gatehouse-caller-token"),
    false,
  );
  const kernel = find(existing, "Deployment", name("kernel")).spec.template.spec.containers[0];
  const ref = kernel.env.find((e: { name: string }) => e.name === "GATEHOUSE_CALLER_TOKEN_SECRET");
  assert.equal(ref.valueFrom.secretKeyRef.name, "company-caller-token");
});

test("TLS off (the default): no TEMPORAL_TLS*/NATS_TLS* variables and no TLS volumes in any pod", async () => {
  const objects = await render(["minimal.yaml"]);
  for (const c of COMPONENTS) {
    const { env, volumes } = podFiles(objects, c);
    assert.deepEqual(
      Object.keys(env).filter((k) => /^(TEMPORAL_TLS|TEMPORAL_API_KEY|NATS_TLS)/.test(k)),
      [],
      c,
    );
    assert.deepEqual(
      volumes.filter((v) => /tls|api-key/.test(v)),
      [],
      c,
    );
  }
});

test("temporal.tls and nats.tls mount the named Secrets read-only into the pods that talk to Temporal / NATS and point the variables at the files", async () => {
  const objects = await render(["minimal.yaml", "tls.yaml"]);
  for (const c of ["kernel", "approval", "worker"]) {
    const { env, source } = podFiles(objects, c);
    assert.equal(env.TEMPORAL_TLS, "true", c);
    assert.equal(env.TEMPORAL_TLS_SERVER_NAME, "temporal.example.com", c);
    const secret = "temporal-client-tls";
    assert.deepEqual(
      source(env.TEMPORAL_TLS_CA_FILE as string),
      { secret, key: "ca.crt", readOnly: true },
      c,
    );
    assert.deepEqual(
      source(env.TEMPORAL_TLS_CERT_FILE as string),
      { secret, key: "tls.crt", readOnly: true },
      c,
    );
    assert.deepEqual(
      source(env.TEMPORAL_TLS_KEY_FILE as string),
      { secret, key: "tls.key", readOnly: true },
      c,
    );
    assert.deepEqual(
      source(env.TEMPORAL_API_KEY_FILE as string),
      { secret: "temporal-cloud-key", key: "api-key", readOnly: true },
      c,
    );
  }
  for (const c of ["approval", "gateway"]) {
    const { env, source } = podFiles(objects, c);
    assert.equal(env.NATS_URL, "tls://nats-0.nats:4443,tls://nats-1.nats:4443", c);
    assert.deepEqual(
      source(env.NATS_TLS_CA_FILE as string),
      { secret: "nats-client-tls", key: "ca.crt", readOnly: true },
      c,
    );
    // certKey/keyKey "": no client certificate.
    assert.equal(env.NATS_TLS_CERT_FILE, undefined, c);
    assert.equal(env.NATS_TLS_KEY_FILE, undefined, c);
  }
  // Only those pods get the Secrets.
  for (const c of ["gateway", "gatekeeper-mcp", "gatekeeper-git", "sandbox-runner"]) {
    assert.equal(podFiles(objects, c).env.TEMPORAL_TLS, undefined, c);
  }
  for (const c of ["kernel", "worker", "gatekeeper-mcp", "gatekeeper-git", "sandbox-runner"]) {
    assert.equal(podFiles(objects, c).env.NATS_TLS_CA_FILE, undefined, c);
  }
  // The NetworkPolicies open the tls:// servers' port.
  const policy = find(objects, "NetworkPolicy", name("gateway"));
  assert.ok(JSON.stringify(policy.spec.egress).includes('"port":4443'), "the gateway may reach NATS on 4443");
});

/** A Deployment's pod: its ServiceAccount, whether it mounts the token, and its env (name -> value or fieldRef path). */
function podIdentity(objects: K8sObject[], c: string) {
  const pod = find(objects, "Deployment", name(c)).spec.template.spec;
  const env: Record<string, string | undefined> = Object.fromEntries(
    (
      pod.containers[0].env as {
        name: string;
        value?: string;
        valueFrom?: { fieldRef?: { fieldPath: string } };
      }[]
    ).map((e) => [
      e.name,
      e.value ?? (e.valueFrom?.fieldRef ? `fieldRef:${e.valueFrom.fieldRef.fieldPath}` : undefined),
    ]),
  );
  return { serviceAccount: pod.serviceAccountName, token: pod.automountServiceAccountToken, env };
}

test("sandbox.backend=kubernetes: a Role in the sandbox namespace allowing exactly pods and pods/attach, bound only to the runner's ServiceAccount, whose token only the runner mounts", async () => {
  const objects = await render(["minimal.yaml", "kubernetes-backend.yaml"]);
  const role = find(objects, "Role", name("sandbox-runner")) as K8sObject & { rules: unknown };
  assert.equal((role.metadata as { namespace?: string }).namespace, "gh-sandboxes");
  assert.deepEqual(role.rules, [
    { apiGroups: [""], resources: ["pods"], verbs: ["create", "get", "list", "watch", "delete", "patch"] },
    { apiGroups: [""], resources: ["pods/attach"], verbs: ["create", "get"] },
  ]);
  const binding = find(objects, "RoleBinding", name("sandbox-runner")) as K8sObject & {
    roleRef: unknown;
    subjects: unknown;
  };
  assert.equal((binding.metadata as { namespace?: string }).namespace, "gh-sandboxes");
  assert.deepEqual(binding.roleRef, {
    apiGroup: "rbac.authorization.k8s.io",
    kind: "Role",
    name: name("sandbox-runner"),
  });
  assert.deepEqual(binding.subjects, [
    { kind: "ServiceAccount", name: name("sandbox-runner"), namespace: "gh" },
  ]);
  assert.deepEqual(
    objects.filter((o) => /Role|RoleBinding/.test(o.kind)).map((o) => `${o.kind}/${o.metadata.name}`),
    [`Role/${name("sandbox-runner")}`, `RoleBinding/${name("sandbox-runner")}`],
    "no other Role, no ClusterRole",
  );
  const sa = find(objects, "ServiceAccount", name("sandbox-runner"));
  assert.equal(sa.automountServiceAccountToken, false, "the token is mounted by the runner's pod alone");
  for (const c of COMPONENTS) {
    const { serviceAccount, token } = podIdentity(objects, c);
    const runner = c === "sandbox-runner";
    assert.equal(serviceAccount, runner ? name("sandbox-runner") : "t-gatehouse", c);
    assert.equal(token, runner, `${c}: token mounted only in the runner's pod`);
  }
  const ns = find(objects, "Namespace", "gh-sandboxes");
  assert.equal(ns.metadata.labels?.["pod-security.kubernetes.io/enforce"], "restricted");

  // The default backend: none of it, and the runner keeps the shared ServiceAccount without a token.
  const plain = await render(["minimal.yaml"]);
  assert.deepEqual(
    plain.filter((o) =>
      ["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "Namespace"].includes(o.kind),
    ),
    [],
  );
  assert.deepEqual(
    { ...podIdentity(plain, "sandbox-runner"), env: undefined },
    { serviceAccount: "t-gatehouse", token: false, env: undefined },
  );
  // createNamespace=false: the Role goes to a namespace that exists already.
  const own = await render(
    ["minimal.yaml", "kubernetes-backend.yaml"],
    ["sandbox.kubernetes.createNamespace=false", "sandbox.kubernetes.namespace=agents"],
  );
  assert.equal(
    own.some((o) => o.kind === "Namespace"),
    false,
  );
  assert.equal(
    (find(own, "Role", name("sandbox-runner")).metadata as { namespace?: string }).namespace,
    "agents",
  );
});

test("sandbox.backend=kubernetes: the runner's env names the sandbox namespace, image, RuntimeClass, its own pod and the pods' resources", async () => {
  const objects = await render(
    ["minimal.yaml", "kubernetes-backend.yaml"],
    ["sandboxRunner.mode=gvisor-pod"],
  );
  const { env } = podIdentity(objects, "sandbox-runner");
  assert.deepEqual(
    Object.fromEntries(
      Object.entries(env).filter(
        ([k]) => k === "SANDBOX_MODE" || k.startsWith("SANDBOX_K8S_") || k === "SANDBOX_MEMORY_MB",
      ),
    ),
    {
      SANDBOX_MODE: "kubernetes",
      SANDBOX_K8S_NAMESPACE: "gh-sandboxes",
      SANDBOX_K8S_IMAGE: "gatehouse/sandbox:0.1.0",
      SANDBOX_K8S_IMAGE_PULL_POLICY: "IfNotPresent",
      SANDBOX_K8S_RUNTIME_CLASS: "gvisor",
      SANDBOX_K8S_RUNNER_NAME: "fieldRef:metadata.name",
      SANDBOX_K8S_CPU_REQUEST: "100m",
      SANDBOX_K8S_CPU_LIMIT: "1",
      SANDBOX_K8S_MEMORY_REQUEST_MB: "256",
      SANDBOX_MEMORY_MB: "2560",
      SANDBOX_K8S_EPHEMERAL_MB: "256",
    },
  );
  assert.equal(env.SANDBOX_WARM, "2", "the pool's own settings still apply");
  const set = await render(
    ["minimal.yaml", "kubernetes-backend.yaml"],
    [
      "global.image.registry=registry.example.com/platform",
      "sandbox.kubernetes.namespace=agents",
      "sandbox.kubernetes.runtimeClassName=gvisor-strict",
      "sandbox.kubernetes.image.tag=1.2.3",
      "sandbox.kubernetes.image.pullPolicy=Always",
      "sandbox.kubernetes.imagePullSecrets[0].name=regcred",
      "sandbox.kubernetes.imagePullSecrets[1].name=mirror",
      "sandbox.kubernetes.resources.requests.cpu=250m",
      "sandbox.kubernetes.resources.limits.cpu=2",
      "sandbox.kubernetes.resources.requests.memoryMb=512",
      "sandbox.kubernetes.resources.limits.memoryMb=1024",
      "sandbox.kubernetes.resources.ephemeralMb=64",
    ],
  );
  const e = podIdentity(set, "sandbox-runner").env;
  assert.equal(e.SANDBOX_K8S_NAMESPACE, "agents");
  assert.equal(e.SANDBOX_K8S_RUNTIME_CLASS, "gvisor-strict");
  assert.equal(e.SANDBOX_K8S_IMAGE, "registry.example.com/platform/gatehouse/sandbox:1.2.3");
  assert.equal(e.SANDBOX_K8S_IMAGE_PULL_POLICY, "Always");
  assert.equal(e.SANDBOX_K8S_IMAGE_PULL_SECRETS, "regcred,mirror");
  assert.deepEqual(
    [
      e.SANDBOX_K8S_CPU_REQUEST,
      e.SANDBOX_K8S_CPU_LIMIT,
      e.SANDBOX_K8S_MEMORY_REQUEST_MB,
      e.SANDBOX_MEMORY_MB,
      e.SANDBOX_K8S_EPHEMERAL_MB,
    ],
    ["250m", "2", "512", "1024", "64"],
  );
  const plain = podIdentity(await render(["minimal.yaml"]), "sandbox-runner").env;
  assert.equal(plain.SANDBOX_MODE, "gvisor-pod");
  assert.deepEqual(
    Object.keys(plain).filter((k) => k.startsWith("SANDBOX_K8S_")),
    [],
  );
});

test("sandbox.backend=kubernetes: every pod in the sandbox namespace is denied all traffic; the runner's only egress is the API server", async () => {
  const objects = await render(["minimal.yaml", "kubernetes-backend.yaml"]);
  const deny = find(objects, "NetworkPolicy", "t-gatehouse-sandbox-deny-all");
  assert.equal((deny.metadata as { namespace?: string }).namespace, "gh-sandboxes");
  assert.deepEqual(deny.spec, {
    podSelector: {},
    policyTypes: ["Ingress", "Egress"],
    ingress: [],
    egress: [],
  });
  const runner = find(objects, "NetworkPolicy", name("sandbox-runner"));
  assert.deepEqual(runner.spec.egress, [
    {
      to: [{ ipBlock: { cidr: "10.244.0.1/32" } }],
      ports: [
        { port: 443, protocol: "TCP" },
        { port: 6443, protocol: "TCP" },
      ],
    },
  ]);
  assert.deepEqual(peers(runner.spec.ingress, "from"), ["kernel"], "ingress still from the kernel only");
  const off = await render(
    ["minimal.yaml"],
    ["sandbox.backend=kubernetes", "networkPolicy.enabled=false", "unsafeAcknowledgeWeakenedSandbox=true"],
  );
  assert.equal(
    off.some((o) => o.kind === "NetworkPolicy"),
    false,
    "no policies: no API server addresses needed",
  );
});

/** GATEKEEPER_ADDRESSES of kernel, approval and worker (each must carry the same value). */

test("rollouts lose no serving replica: rolling components surge one new pod before stopping one (maxUnavailable 0); the gateway drains for gateway.drainSeconds, 5 s or more inside its grace period", async () => {
  const objects = await render(["minimal.yaml"]);
  const gateway = find(objects, "Deployment", name("gateway"));
  assert.deepEqual(gateway.spec.strategy, {
    type: "RollingUpdate",
    rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
  });
  assert.equal(find(objects, "Deployment", name("sandbox-runner")).spec.strategy.type, "RollingUpdate");
  assert.equal(envVar(objects, "gateway", "GATEWAY_DRAIN_SECONDS")?.value, "10");
  assert.equal(gateway.spec.template.spec.terminationGracePeriodSeconds, 30);
  // With PostgreSQL, kernel, approval and worker roll the same way (with SQLite they are Recreate, above).
  const pg = await render(["minimal.yaml", "postgres-secret.yaml"]);
  for (const c of ["kernel", "approval", "worker"]) {
    assert.deepEqual(
      find(pg, "Deployment", name(c)).spec.strategy.rollingUpdate,
      { maxUnavailable: 0, maxSurge: 1 },
      c,
    );
  }
  const longer = await render(
    ["minimal.yaml"],
    ["gateway.drainSeconds=40", "gateway.terminationGracePeriodSeconds=45"],
  );
  assert.equal(envVar(longer, "gateway", "GATEWAY_DRAIN_SECONDS")?.value, "40");
  const tooLong = await template(["minimal.yaml"], ["gateway.drainSeconds=26"]);
  assert.equal(tooLong.ok, false);
  assert.match(
    tooLong.stderr,
    /gateway\.drainSeconds: 26 with gateway\.terminationGracePeriodSeconds 30: the drain must end at least 5 s before Kubernetes kills the pod.*raise gateway\.terminationGracePeriodSeconds to at least 31/,
  );
  const negative = await template(["minimal.yaml"], ["gateway.drainSeconds=-1"]);
  assert.equal(negative.ok, false);
  assert.match(negative.stderr, /drainSeconds/);
});
