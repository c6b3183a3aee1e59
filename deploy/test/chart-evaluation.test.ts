/**
 * The chart's evaluation profile (values-evaluation.yaml, no cluster needed): it renders a Temporal dev
 * server on a claim and a NATS server inside the release, points the services at them, generates one
 * sign-in token the gateway and `helm test` share, registers the memory MCP server, keeps the pods
 * PodSecurity-restricted and their NetworkPolicies tight; given addresses of its own, the release runs
 * neither server.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { parse } from "yaml";
import { CHART, envVar, find, helm, KUBE_VERSION, peers, render, template } from "./helm.ts";

const EVALUATION = join(CHART, "values-evaluation.yaml");
const name = (c: string) => `t-gatehouse-${c}`;

test("helm lint --strict passes with values-evaluation.yaml alone", async () => {
  const r = await helm(["lint", CHART, "--strict", "--kube-version", KUBE_VERSION, "-f", EVALUATION]);
  assert.ok(r.ok, r.stdout + r.stderr);
});

test("the evaluation profile runs Temporal (on a claim) and NATS in the release, and the services use them", async () => {
  const objects = await render([EVALUATION]);
  const temporal = find(objects, "Deployment", name("temporal"));
  const pod = temporal.spec.template.spec;
  assert.equal(pod.containers[0].image, "gatehouse/evaluation:0.1.0");
  assert.deepEqual(pod.containers[0].args.slice(0, 2), ["server", "start-dev"]);
  assert.ok(pod.containers[0].args.includes("--db-filename=/data/temporal.sqlite"));
  assert.equal(
    pod.volumes.find((v: { name: string }) => v.name === "data").persistentVolumeClaim.claimName,
    name("temporal"),
  );
  assert.equal(temporal.spec.strategy.type, "Recreate", "one process owns the SQLite file");
  const claim = find(objects, "PersistentVolumeClaim", name("temporal"));
  assert.equal(claim.spec.storageClassName, undefined, "the cluster's default StorageClass");
  assert.equal(claim.metadata.annotations?.["helm.sh/resource-policy"], "keep");
  find(objects, "Deployment", name("nats"));
  find(objects, "Service", name("temporal"));
  find(objects, "Service", name("nats"));
  for (const c of ["kernel", "approval", "worker"]) {
    assert.equal(envVar(objects, c, "TEMPORAL_ADDRESS")?.value, `${name("temporal")}:7233`, c);
  }
  for (const c of ["approval", "gateway"]) {
    assert.equal(envVar(objects, c, "NATS_URL")?.value, `nats://${name("nats")}:4222`, c);
  }
  for (const c of ["temporal", "nats"]) {
    const spec = find(objects, "Deployment", name(c)).spec.template.spec;
    assert.equal(spec.automountServiceAccountToken, false, c);
    assert.equal(spec.securityContext.runAsNonRoot, true, c);
    assert.equal(spec.securityContext.runAsUser, 65534, c);
    const sc = spec.containers[0].securityContext;
    assert.equal(sc.readOnlyRootFilesystem, true, c);
    assert.equal(sc.allowPrivilegeEscalation, false, c);
    assert.deepEqual(sc.capabilities, { drop: ["ALL"] }, c);
  }
});

test("the evaluation's NetworkPolicies: Temporal from kernel, approval and worker; NATS from approval and gateway; NATS reaches nothing", async () => {
  const objects = await render([EVALUATION]);
  const t = find(objects, "NetworkPolicy", name("temporal")).spec;
  assert.deepEqual(peers([t.ingress[0]], "from"), ["approval", "kernel", "worker"]);
  assert.deepEqual(t.ingress[0].ports, [{ port: 7233, protocol: "TCP" }]);
  const n = find(objects, "NetworkPolicy", name("nats")).spec;
  assert.deepEqual(peers(n.ingress, "from"), ["approval", "gateway"]);
  assert.deepEqual(n.egress, []);
});

test("one generated token signs in at the gateway and runs helm test's snippet; the memory server is registered", async () => {
  const objects = await render([EVALUATION]);
  const tokenSecret = find(objects, "Secret", name("evaluation-token"));
  const token = Buffer.from(String((tokenSecret.data as Record<string, string>).token), "base64").toString();
  assert.ok(token.length >= 32, token);
  const devTokens = find(objects, "Secret", name("dev-tokens"));
  const file = parse((devTokens.stringData as Record<string, string>)["dev-tokens.yaml"]!);
  assert.deepEqual(file.tokens, [
    { token, subject: "evaluator", name: "Evaluator", roles: ["approver", "admin"] },
  ]);
  assert.equal(
    envVar(objects, "gateway", "GATEWAY_DEV_TOKENS_FILE")?.value,
    "/etc/gatehouse/dev-tokens/dev-tokens.yaml",
  );
  const snippet = find(objects, "Pod", name("test-snippet"));
  const tokenEnv = snippet.spec.containers[0].env.find((e: { name: string }) => e.name === "TOKEN");
  assert.equal(tokenEnv.valueFrom.secretKeyRef.name, name("evaluation-token"));
  const registry = find(objects, "Secret", name("mcp-registry"));
  const text = JSON.stringify(registry);
  assert.match(text, /\/app\/mcp\/memory\/server\.mjs/);
});

test("with its own Temporal, NATS and sign-in the evaluation profile renders neither server nor token", async () => {
  const objects = await render(
    [EVALUATION],
    [
      "temporal.address=temporal.example:7233",
      "nats.url=nats://nats.example:4222",
      "auth.devTokens.tokens[0].token=0123456789abcdef0123",
      "auth.devTokens.tokens[0].subject=alice",
      "auth.devTokens.tokens[0].roles={approver}",
    ],
  );
  for (const kind of ["Deployment", "Service", "NetworkPolicy"]) {
    for (const c of ["temporal", "nats"]) {
      assert.ok(!objects.some((o) => o.kind === kind && o.metadata.name === name(c)), `${kind} ${c}`);
    }
  }
  assert.ok(!objects.some((o) => o.metadata.name === name("evaluation-token")));
  assert.equal(envVar(objects, "kernel", "TEMPORAL_ADDRESS")?.value, "temporal.example:7233");
});

test("without the profile, the missing Temporal address names the evaluation profile as the trial's way", async () => {
  const r = await template([], [], []);
  assert.equal(r.ok, false);
  assert.match(r.stderr, /temporal\.address: .*-f values-evaluation\.yaml runs a dev server in the release/);
});
