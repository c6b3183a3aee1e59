/**
 * The sandbox cannot be weakened by accident (no cluster needed): each value that would take the sandbox
 * or its runner off gVisor, drop the NetworkPolicies, widen the runner's securityContext, open its egress
 * or drop the admission policy is refused at render naming the value and its fix; with
 * unsafeAcknowledgeWeakenedSandbox=true the release renders and the gateway gets the list
 * (GATEHOUSE_SANDBOX_WEAKENED, reported by /healthz). The admission policy and its bindings, the
 * collector-only tracing egress of the runner, and the Secrets kept on uninstall are checked as rendered.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { CHART, envVar, find, type K8sObject, parseManifests, render, template } from "./helm.ts";

const name = (c: string) => `t-gatehouse-${c}`;
const ACK = "unsafeAcknowledgeWeakenedSandbox=true";
const POLICY = "t-gatehouse.gh.sandbox.gatehouse.dev";
const K8S = ["minimal.yaml", "kubernetes-backend.yaml"];

/** Each weakening: the values that make it, what the refusal must say, the item GATEHOUSE_SANDBOX_WEAKENED holds. */
const WEAKENINGS: { sets: string[]; files?: string[]; message: RegExp; item: string }[] = [
  {
    sets: ["networkPolicy.enabled=false"],
    message: /networkPolicy\.enabled: false renders no NetworkPolicy.*set networkPolicy\.enabled=true/,
    item: "networkPolicy.enabled=false",
  },
  {
    sets: ["runtimeClass.name=runc", "runtimeClass.create=false"],
    message: /runtimeClass\.name: "runc" is not a gVisor RuntimeClass.*e\.g\. gvisor/,
    item: "runtimeClass.name=runc",
  },
  {
    sets: ["runtimeClass.name="],
    message: /runtimeClass\.name: empty, so the sandbox runs without gVisor/,
    item: 'runtimeClass.name=""',
  },
  {
    sets: ["runtimeClass.handler=runc"],
    message: /runtimeClass\.handler: "runc" is not gVisor's runsc.*set runtimeClass\.handler=runsc/,
    item: "runtimeClass.handler=runc",
  },
  {
    files: ["kubernetes-backend.yaml"],
    sets: ["sandbox.kubernetes.runtimeClassName=runc"],
    message: /sandbox\.kubernetes\.runtimeClassName: "runc" is not a gVisor RuntimeClass/,
    item: "sandbox.kubernetes.runtimeClassName=runc",
  },
  {
    sets: ["sandboxRunner.podSecurityContext.runAsNonRoot=false"],
    message: /sandboxRunner\.podSecurityContext\.runAsNonRoot: false lets the runner run as root/,
    item: "sandboxRunner.podSecurityContext.runAsNonRoot=false",
  },
  {
    sets: ["sandboxRunner.containerSecurityContext.runAsNonRoot=false"],
    message: /sandboxRunner\.containerSecurityContext\.runAsNonRoot: false/,
    item: "sandboxRunner.containerSecurityContext.runAsNonRoot=false",
  },
  {
    sets: ["sandboxRunner.podSecurityContext.runAsUser=0"],
    message: /sandboxRunner\.podSecurityContext\.runAsUser: 0 runs the runner as root/,
    item: "sandboxRunner.podSecurityContext.runAsUser=0",
  },
  {
    sets: ["sandboxRunner.containerSecurityContext.runAsUser=0"],
    message: /sandboxRunner\.containerSecurityContext\.runAsUser: 0 runs the runner as root/,
    item: "sandboxRunner.containerSecurityContext.runAsUser=0",
  },
  {
    sets: ["sandboxRunner.containerSecurityContext.readOnlyRootFilesystem=false"],
    message:
      /sandboxRunner\.containerSecurityContext\.readOnlyRootFilesystem: false makes the runner's root file system writable/,
    item: "sandboxRunner.containerSecurityContext.readOnlyRootFilesystem=false",
  },
  {
    sets: ["sandboxRunner.containerSecurityContext.allowPrivilegeEscalation=true"],
    message: /sandboxRunner\.containerSecurityContext\.allowPrivilegeEscalation: true/,
    item: "sandboxRunner.containerSecurityContext.allowPrivilegeEscalation=true",
  },
  {
    sets: ["sandboxRunner.containerSecurityContext.privileged=true"],
    message: /sandboxRunner\.containerSecurityContext\.privileged: true/,
    item: "sandboxRunner.containerSecurityContext.privileged=true",
  },
  {
    sets: ["sandboxRunner.containerSecurityContext.capabilities.add={NET_RAW}"],
    message:
      /sandboxRunner\.containerSecurityContext\.capabilities\.add: NET_RAW gives the runner Linux capabilities/,
    item: "sandboxRunner.containerSecurityContext.capabilities.add=NET_RAW",
  },
  {
    sets: ["sandboxRunner.containerSecurityContext.capabilities.drop={NET_RAW}"],
    message: /sandboxRunner\.containerSecurityContext\.capabilities\.drop: must hold ALL/,
    item: "sandboxRunner.containerSecurityContext.capabilities.drop=NET_RAW",
  },
  {
    sets: ["sandboxRunner.podSecurityContext.seccompProfile.type=Unconfined"],
    message: /sandboxRunner\.podSecurityContext\.seccompProfile\.type: Unconfined/,
    item: "sandboxRunner.podSecurityContext.seccompProfile.type=Unconfined",
  },
  {
    sets: ["sandboxRunner.extraVolumes[0].name=host", "sandboxRunner.extraVolumes[0].hostPath.path=/"],
    message: /sandboxRunner\.extraVolumes\[0\]: a hostPath volume/,
    item: "sandboxRunner.extraVolumes[0].hostPath",
  },
  {
    sets: ["sandboxRunner.extraEnv[0].name=SANDBOX_INSECURE_NO_GVISOR", "sandboxRunner.extraEnv[0].value=1"],
    message: /sandboxRunner\.extraEnv\[0\]: SANDBOX_INSECURE_NO_GVISOR overrides the sandbox mode/,
    item: "sandboxRunner.extraEnv[0].name=SANDBOX_INSECURE_NO_GVISOR",
  },
  {
    sets: ["sandboxRunner.mode=none"],
    message: /sandboxRunner\.mode: none runs agent code without gVisor's check/,
    item: "sandboxRunner.mode=none",
  },
  {
    sets: [
      "tracing.endpoint=http://otel.observability:4317",
      "tracing.sandboxRunner=true",
      "networkPolicy.tracing.sandboxRunnerCidrs={0.0.0.0/0}",
    ],
    message:
      /networkPolicy\.tracing\.sandboxRunnerCidrs: 0\.0\.0\.0\/0 is a whole network, not the collector's address/,
    item: "networkPolicy.tracing.sandboxRunnerCidrs=0.0.0.0/0",
  },
  {
    files: ["kubernetes-backend.yaml"],
    sets: ["networkPolicy.apiServer.cidrs={10.0.0.0/8}"],
    message:
      /networkPolicy\.apiServer\.cidrs: 10\.0\.0\.0\/8 is a whole network, not the API server's address/,
    item: "networkPolicy.apiServer.cidrs=10.0.0.0/8",
  },
  {
    sets: ["sandbox.admissionPolicy.enabled=false"],
    message: /sandbox\.admissionPolicy\.enabled: false leaves the API server admitting any pod/,
    item: "sandbox.admissionPolicy.enabled=false",
  },
];

test("each value that weakens the sandbox is refused naming it and its fix; acknowledged, it renders and the gateway's GATEHOUSE_SANDBOX_WEAKENED names it", async () => {
  for (const w of WEAKENINGS) {
    const files = ["minimal.yaml", ...(w.files ?? [])];
    const r = await template(files, w.sets);
    assert.equal(r.ok, false, `${w.sets.join(" ")}: refused`);
    assert.match(r.stderr, /1 value\(s\) weaken the sandbox that runs agent code/, w.sets.join(" "));
    assert.match(r.stderr, /set unsafeAcknowledgeWeakenedSandbox=true/, w.sets.join(" "));
    assert.match(r.stderr, w.message, w.sets.join(" "));
    const acked = await render(files, [...w.sets, ACK]);
    assert.equal(envVar(acked, "gateway", "GATEHOUSE_SANDBOX_WEAKENED")?.value, w.item, w.sets.join(" "));
  }
});

test("several weakenings are listed in one refusal, and all in the gateway's list once acknowledged", async () => {
  const sets = [
    "networkPolicy.enabled=false",
    "runtimeClass.name=runc",
    "sandboxRunner.containerSecurityContext.runAsUser=0",
    "sandboxRunner.containerSecurityContext.capabilities.add={NET_RAW,SYS_ADMIN}",
  ];
  const r = await template(["minimal.yaml"], sets);
  assert.equal(r.ok, false);
  assert.match(r.stderr, /4 value\(s\) weaken the sandbox/);
  const objects = await render(["minimal.yaml"], [...sets, ACK]);
  assert.equal(
    envVar(objects, "gateway", "GATEHOUSE_SANDBOX_WEAKENED")?.value,
    "networkPolicy.enabled=false,runtimeClass.name=runc,sandboxRunner.containerSecurityContext.runAsUser=0,sandboxRunner.containerSecurityContext.capabilities.add=NET_RAW+SYS_ADMIN",
  );
});

test("the defaults weaken nothing: no GATEHOUSE_SANDBOX_WEAKENED; the acknowledgment alone changes nothing", async () => {
  for (const files of [["minimal.yaml"], K8S]) {
    const objects = await render(files);
    assert.equal(envVar(objects, "gateway", "GATEHOUSE_SANDBOX_WEAKENED"), undefined, files.join(" "));
    const acked = await render(files, [ACK]);
    assert.equal(envVar(acked, "gateway", "GATEHOUSE_SANDBOX_WEAKENED"), undefined, files.join(" "));
  }
  // A gVisor RuntimeClass of another name is not a weakening.
  const other = await render(K8S, ["sandbox.kubernetes.runtimeClassName=gvisor-strict"]);
  assert.equal(envVar(other, "gateway", "GATEHOUSE_SANDBOX_WEAKENED"), undefined);
});

test("tracing.sandboxRunner=true without the collector's address is refused; with it the runner's egress goes to that address and the collector's port only", async () => {
  const tracing = ["tracing.endpoint=http://otel-collector.observability:4317", "tracing.sandboxRunner=true"];
  const r = await template(["minimal.yaml"], tracing);
  assert.equal(r.ok, false);
  assert.match(
    r.stderr,
    /networkPolicy\.tracing\.sandboxRunnerCidrs: tracing\.sandboxRunner=true opens the sandbox runner's egress, and only to the collector/,
  );
  const objects = await render(
    ["minimal.yaml"],
    [
      ...tracing,
      "networkPolicy.tracing.sandboxRunnerCidrs={10.0.5.7/32}",
      "networkPolicy.tracing.to[0].namespaceSelector.matchLabels.team=observability",
    ],
  );
  assert.deepEqual(find(objects, "NetworkPolicy", name("sandbox-runner")).spec.egress, [
    { ports: [{ port: 4317, protocol: "TCP" }], to: [{ ipBlock: { cidr: "10.0.5.7/32" } }] },
  ]);
  // The other services keep networkPolicy.tracing.to.
  const kernel = find(objects, "NetworkPolicy", name("kernel")).spec.egress as { to?: unknown[] }[];
  assert.ok(
    kernel.some(
      (e) => JSON.stringify(e.to) === '[{"namespaceSelector":{"matchLabels":{"team":"observability"}}}]',
    ),
    JSON.stringify(kernel),
  );
  await assert.rejects(
    render(["minimal.yaml"], [...tracing, "networkPolicy.tracing.sandboxRunnerCidrs={otel.example.com}"]),
    /\/networkPolicy\/tracing\/sandboxRunnerCidrs\/0.*does not match pattern/,
  );
});

test("no value puts the sandbox runner in a host namespace: hostNetwork, hostPID and hostIPC are unknown keys to the schema", async () => {
  for (const key of ["hostNetwork", "hostPID", "hostIPC"]) {
    const r = await template(["minimal.yaml"], [`sandboxRunner.${key}=true`, ACK]);
    assert.equal(r.ok, false, key);
    assert.match(r.stderr, new RegExp(`/sandboxRunner.*additional properties '${key}' not allowed`), key);
  }
});

/** The admission policy, its bindings by name, and each validation's message. */
function admission(objects: K8sObject[]) {
  const policy = find(objects, "ValidatingAdmissionPolicy", POLICY);
  const bindings = new Map(
    objects
      .filter((o) => o.kind === "ValidatingAdmissionPolicyBinding")
      .map((o) => [o.metadata.name, o.spec] as const),
  );
  const rules = (policy.spec.validations as { message?: string; messageExpression?: string }[]).map(
    (v) => /rule (\w+)/.exec(v.message ?? v.messageExpression ?? "")?.[1],
  );
  return { policy, bindings, rules };
}

test("the admission policy names each rule; it binds the runner's pods, and with sandbox.backend=kubernetes the sandbox namespace; Deny unless an acknowledged weakening concerns those pods", async () => {
  const runnerPod = await render(["minimal.yaml"]);
  const a = admission(runnerPod);
  assert.deepEqual(a.rules, [
    "runtimeClassName",
    "runAsNonRoot",
    "readOnlyRootFilesystem",
    "allowPrivilegeEscalation",
    "capabilities",
    "hostNamespaces",
    "ephemeralContainers",
    "serviceAccountToken",
  ]);
  assert.equal(a.policy.spec.failurePolicy, "Fail");
  assert.deepEqual(a.policy.spec.matchConstraints.resourceRules[0].resources, [
    "pods",
    "pods/ephemeralcontainers",
  ]);
  const vars = Object.fromEntries(
    (a.policy.spec.variables as { name: string; expression: string }[]).map((v) => [v.name, v.expression]),
  );
  assert.equal(vars.runtimeClass, "request.namespace == 'gh-sandboxes' ? 'gvisor' : 'gvisor'");
  assert.equal(vars.tokenAllowed, "false", "runner-pod backend: no pod may have a token");
  assert.deepEqual([...a.bindings.keys()], [`runner.${POLICY}`]);
  const runner = a.bindings.get(`runner.${POLICY}`);
  assert.deepEqual(runner.validationActions, ["Deny"]);
  assert.deepEqual(runner.matchResources, {
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "gh" } },
    objectSelector: {
      matchLabels: { "app.kubernetes.io/instance": "t", "app.kubernetes.io/component": "sandbox-runner" },
    },
  });

  const k8s = admission(await render(K8S, ["sandbox.kubernetes.runtimeClassName=gvisor-strict"]));
  const kvars = Object.fromEntries(
    (k8s.policy.spec.variables as { name: string; expression: string }[]).map((v) => [v.name, v.expression]),
  );
  assert.equal(kvars.runtimeClass, "request.namespace == 'gh-sandboxes' ? 'gvisor-strict' : 'gvisor'");
  assert.equal(
    kvars.tokenAllowed,
    "request.namespace == 'gh'",
    "only the runner (release namespace) mounts its token",
  );
  assert.deepEqual(k8s.bindings.get(`sandboxes.${POLICY}`), {
    policyName: POLICY,
    validationActions: ["Deny"],
    matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "gh-sandboxes" } } },
  });

  // An acknowledged weakening of the runner's pod: its binding warns (and audits) instead; the sandbox
  // namespace's still denies. One that concerns no pod (the NetworkPolicies) leaves both on Deny.
  const weak = admission(
    await render(K8S, ["sandboxRunner.containerSecurityContext.readOnlyRootFilesystem=false", ACK]),
  );
  assert.deepEqual(weak.bindings.get(`runner.${POLICY}`).validationActions, ["Warn", "Audit"]);
  assert.deepEqual(weak.bindings.get(`sandboxes.${POLICY}`).validationActions, ["Deny"]);
  const sandboxRc = admission(await render(K8S, ["sandbox.kubernetes.runtimeClassName=runc", ACK]));
  assert.deepEqual(sandboxRc.bindings.get(`runner.${POLICY}`).validationActions, ["Deny"]);
  assert.deepEqual(sandboxRc.bindings.get(`sandboxes.${POLICY}`).validationActions, ["Warn", "Audit"]);
  const open = admission(await render(K8S, ["networkPolicy.enabled=false", ACK]));
  for (const b of open.bindings.values()) assert.deepEqual(b.validationActions, ["Deny"]);

  // Kubernetes 1.29 serves no admissionregistration.k8s.io/v1 policy: refused naming the value, unless it is turned off.
  const old = await template(["minimal.yaml"], [], ["--kube-version", "1.29.3"]);
  assert.equal(old.ok, false);
  assert.match(old.stderr, /sandbox\.admissionPolicy\.enabled: Kubernetes v1\.29\.3 does not serve/);
  const oldOff = await template(
    ["minimal.yaml"],
    ["sandbox.admissionPolicy.enabled=false", ACK],
    ["--kube-version", "1.29.3"],
  );
  assert.ok(oldOff.ok, oldOff.stderr);
  const off = await render(["minimal.yaml"], ["sandbox.admissionPolicy.enabled=false", ACK]);
  assert.equal(
    off.some((o) => o.kind.startsWith("ValidatingAdmissionPolicy")),
    false,
  );
});

test("the caller-token Secret (and the evaluation profile's sign-in token) is kept on helm uninstall; an existing Secret is not rendered", async () => {
  const objects = await render(["minimal.yaml"]);
  assert.equal(
    find(objects, "Secret", name("caller-token")).metadata.annotations?.["helm.sh/resource-policy"],
    "keep",
  );
  const evaluation = await render([join(CHART, "values-evaluation.yaml")]);
  assert.equal(
    find(evaluation, "Secret", name("evaluation-token")).metadata.annotations?.["helm.sh/resource-policy"],
    "keep",
  );
  const existing = parseManifests(
    (await template(["minimal.yaml"], ["callerToken.existingSecret=mine"])).stdout,
  );
  assert.equal(
    existing.some((o) => o.kind === "Secret" && o.metadata.name === name("caller-token")),
    false,
  );
});
