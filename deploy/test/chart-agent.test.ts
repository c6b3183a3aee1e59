/**
 * The chart's `agent` block (the built-in Code Mode agent, docs/agent.md), rendered with `helm template`
 * (no cluster): off by default (no agent env, port, ConfigMap or flow); on, the worker gets the AGENT_*
 * env, the key Secrets mounted as files and the per-workspace models ConfigMap — checked by reading them
 * with the worker's own configuration loader (@gatehouse/agent-core) — the AgentChats port the gateway's
 * AGENT_ADDRESS names, NATS for the streamed model text (NATS_URL, the NATS TLS files, egress: the same
 * as approval's, read back with the worker's own config loader), and NetworkPolicies for exactly the new
 * flows (gateway → worker, worker → kernel, worker → NATS, worker → the model endpoints in agent.egress).
 * Bad values are refused naming the key.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { agentConfigFromEnv, describeAgentConfig } from "@gatehouse/agent-core/providers";
import { makeTestPki } from "@gatehouse/service-kit/test-pki";
import { loadConfig } from "@gatehouse/worker/config";
import {
  CHART,
  find,
  helm,
  type K8sObject,
  KUBE_VERSION,
  parseManifests,
  peers,
  podFiles,
  render,
  template,
  valuesFile,
} from "./helm.ts";

const name = (c: string) => `t-gatehouse-${c}`;
const AGENT_ENV = /^(AGENT_|WORKER_GRPC_ADDR$|KERNEL_ADDRESS$|NATS_)/;

function container(objects: K8sObject[], c: string) {
  return find(objects, "Deployment", name(c)).spec.template.spec.containers[0] as {
    env: { name: string; value?: string }[];
    ports: { name: string; containerPort: number }[];
    volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
  };
}
const envOf = (objects: K8sObject[], c: string) =>
  Object.fromEntries(container(objects, c).env.map((e) => [e.name, e.value ?? ""]));

type Rule = { from?: unknown[]; to?: { ipBlock?: { cidr: string } }[]; ports?: { port: number }[] };
const rules = (objects: K8sObject[], c: string, side: "ingress" | "egress") =>
  (find(objects, "NetworkPolicy", name(c)).spec[side] ?? []) as Rule[];
/** The ports a policy's rules open towards component `peer`. */
function portsTo(objects: K8sObject[], c: string, side: "ingress" | "egress", peer: string): number[] {
  return rules(objects, c, side)
    .filter((r) => peers([r], side === "ingress" ? "from" : "to").includes(peer))
    .flatMap((r) => (r.ports ?? []).map((p) => p.port));
}
/** The egress rules of component `c` that open port `port` (with their peers). */
const egressOn = (objects: K8sObject[], c: string, port: number) =>
  rules(objects, c, "egress").filter((r) => r.ports?.some((p) => p.port === port));
const ipRules = (objects: K8sObject[]) =>
  rules(objects, "worker", "egress")
    .filter((r) => r.to?.some((t) => t.ipBlock))
    .map((r) => ({ cidrs: r.to?.map((t) => t.ipBlock?.cidr), ports: r.ports?.map((p) => p.port) }));

/** Renders with the minimal values, `files` and `sets`; asserts the render is refused matching `named`. */
async function refused(files: string[], sets: string[], named: RegExp): Promise<string> {
  const r = await template(["minimal.yaml", ...files], sets);
  assert.equal(r.ok, false, `expected a refusal, got a render of ${r.stdout.length} bytes`);
  assert.match(r.stderr, named);
  return r.stderr;
}

test("agent off (the default): no agent env, port, key mount or ConfigMap; the worker takes no chats and reaches neither kernel nor model", async () => {
  const objects = await render(["minimal.yaml"]);
  assert.deepEqual(
    Object.keys(envOf(objects, "worker")).filter((k) => AGENT_ENV.test(k)),
    [],
  );
  assert.equal(envOf(objects, "gateway").AGENT_ADDRESS, undefined);
  assert.deepEqual(
    container(objects, "worker").ports.map((p) => p.name),
    ["ops"],
  );
  assert.deepEqual(
    find(objects, "Service", name("worker")).spec.ports.map((p: { name: string }) => p.name),
    ["ops"],
  );
  assert.equal(
    objects.some((o) => o.kind === "ConfigMap" && o.metadata.name === name("agent-models")),
    false,
  );
  assert.deepEqual(peers(rules(objects, "worker", "ingress"), "from"), []);
  assert.deepEqual(portsTo(objects, "worker", "egress", "kernel"), []);
  assert.deepEqual(ipRules(objects), []);
  assert.deepEqual(egressOn(objects, "worker", 4222), [], "no NATS for the worker");
  assert.equal(egressOn(objects, "approval", 4222).length, 1, "the port is approval's NATS port");
  assert.deepEqual(
    podFiles(objects, "worker").volumes.filter((v) => /nats/.test(v)),
    [],
  );
  assert.deepEqual(peers(rules(objects, "kernel", "ingress"), "from"), ["gateway"]);
});

test("agent on: the worker's env, key files and models ConfigMap are what the worker's own loader accepts, keys only as mounted Secrets", async () => {
  const objects = await render(["minimal.yaml", "agent.yaml"]);
  const env = envOf(objects, "worker");
  assert.equal(env.KERNEL_ADDRESS, "t-gatehouse-kernel:7001");
  assert.equal(env.WORKER_GRPC_ADDR, "0.0.0.0:7008");
  assert.equal(env.AGENT_API_KEY_FILE, "/etc/gatehouse/agent-keys/deployment");
  assert.equal(env.AGENT_MODELS_FILE, "/etc/gatehouse/agent-models/models.yaml");
  assert.equal(envOf(objects, "gateway").AGENT_ADDRESS, "t-gatehouse-worker:7008");
  assert.ok(!JSON.stringify(objects).includes("sk-"), "no key in the manifests");

  // Where each mounted file comes from.
  const pod = find(objects, "Deployment", name("worker")).spec.template.spec;
  const mounts = container(objects, "worker").volumeMounts;
  const keys = pod.volumes.find((v: { name: string }) => v.name === "agent-keys");
  assert.equal(keys.projected.defaultMode, 0o440);
  assert.deepEqual(
    keys.projected.sources.map((s: { secret: { name: string; items: { key: string; path: string }[] } }) => [
      s.secret.name,
      s.secret.items,
    ]),
    [
      ["anthropic-key", [{ key: "token", path: "deployment" }]],
      ["google-key", [{ key: "api-key", path: "workspaces/w9876543210" }]],
    ],
  );
  const models = pod.volumes.find((v: { name: string }) => v.name === "agent-models");
  assert.equal(models.configMap.name, name("agent-models"));
  for (const [volume, path] of [
    ["agent-keys", "/etc/gatehouse/agent-keys"],
    ["agent-models", "/etc/gatehouse/agent-models"],
  ])
    assert.deepEqual(
      mounts.find((m) => m.name === volume),
      { name: volume, mountPath: path, readOnly: true },
    );
  const configMap = find(objects, "ConfigMap", name("agent-models")) as K8sObject & {
    data: Record<string, string>;
  };

  // The worker's loader reads the rendered env and files, laid out under a temp dir as they are mounted.
  const root = mkdtempSync(join(tmpdir(), "chart-agent-"));
  try {
    const at = (p: string) => join(root, p);
    const put = (p: string, text: string) => {
      mkdirSync(dirname(at(p)), { recursive: true });
      writeFileSync(at(p), text);
    };
    put(
      "/etc/gatehouse/agent-models/models.yaml",
      configMap.data["models.yaml"]!.replaceAll("/etc/", `${root}/etc/`),
    );
    put("/etc/gatehouse/agent-keys/deployment", "FAKE-anthropic-key\n");
    put("/etc/gatehouse/agent-keys/workspaces/w9876543210", "FAKE-google-key\n");
    const rebased = Object.fromEntries(
      Object.entries(env).map(([k, v]) => [k, v.startsWith("/etc/") ? at(v) : v]),
    );
    const config = agentConfigFromEnv(rebased);
    assert.deepEqual(describeAgentConfig(config), {
      deployment: {
        model: "anthropic:claude-sonnet-4-5",
        baseUrl: undefined,
        apiKeyFile: at("/etc/gatehouse/agent-keys/deployment"),
      },
      workspaces: {
        w0123456789: {
          model: "openai-compatible:qwen3-coder",
          baseUrl: "http://vllm.models:8000/v1",
          apiKeyFile: undefined,
        },
        w9876543210: {
          model: "google:gemini-2.5-pro",
          baseUrl: undefined,
          apiKeyFile: at("/etc/gatehouse/agent-keys/workspaces/w9876543210"),
        },
      },
      limits: { maxSteps: 20, maxTokens: 300_000, maxResultBytes: 32_768, modelAttempts: 5 },
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }

  // A models change rolls the worker: the ConfigMap is part of its checksum.
  const changed = await render(
    ["minimal.yaml", "agent.yaml"],
    ["agent.workspaces.w0123456789.model=qwen3-coder-next"],
  );
  const checksum = (o: K8sObject[]) =>
    find(o, "Deployment", name("worker")).spec.template.metadata.annotations["checksum/config"];
  assert.notEqual(checksum(changed), checksum(objects));
});

test("agent on: the worker gets approval's NATS URL, TLS files (from the same Secret keys) and NATS egress, which its own config loader accepts", async () => {
  const sets = ["nats.tls.certKey=tls.crt", "nats.tls.keyKey=tls.key"];
  const objects = await render(["minimal.yaml", "agent.yaml", "tls.yaml"], sets);
  const worker = podFiles(objects, "worker");
  const approval = podFiles(objects, "approval");
  const natsEnv = (env: Record<string, string>) =>
    Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith("NATS_")));
  assert.deepEqual(natsEnv(worker.env), natsEnv(approval.env));
  assert.deepEqual(Object.keys(natsEnv(worker.env)).sort(), [
    "NATS_TLS_CA_FILE",
    "NATS_TLS_CERT_FILE",
    "NATS_TLS_KEY_FILE",
    "NATS_URL",
  ]);
  for (const [v, key] of [
    ["NATS_TLS_CA_FILE", "ca.crt"],
    ["NATS_TLS_CERT_FILE", "tls.crt"],
    ["NATS_TLS_KEY_FILE", "tls.key"],
  ] as const) {
    const file = worker.env[v] as string;
    assert.deepEqual(worker.source(file), { secret: "nats-client-tls", key, readOnly: true }, v);
    assert.deepEqual(worker.source(file), approval.source(file), v);
  }
  // The same egress rule as approval's (the tls:// servers' port 4443), and nothing for plain 4222.
  assert.equal(egressOn(objects, "worker", 4443).length, 1);
  assert.deepEqual(egressOn(objects, "worker", 4443), egressOn(objects, "approval", 4443));
  assert.deepEqual(egressOn(objects, "worker", 4222), []);
  // networkPolicy.nats.to narrows the worker's rule as it does approval's.
  const to = [{ ipBlock: { cidr: "10.0.9.0/24" } }];
  const r = await template(
    ["minimal.yaml", "agent.yaml"],
    [],
    ["--set-json", `networkPolicy.nats.to=${JSON.stringify(to)}`],
  );
  assert.ok(r.ok, r.stderr);
  const narrowed = parseManifests(r.stdout);
  assert.deepEqual(egressOn(narrowed, "worker", 4222), [{ to, ports: [{ port: 4222, protocol: "TCP" }] }]);
  assert.deepEqual(egressOn(narrowed, "worker", 4222), egressOn(narrowed, "approval", 4222));

  // The worker's own loader (services/worker/src/config.ts) reads the rendered env, the mounted files
  // laid out under a temp dir: NATS is on, over TLS with the mounted CA and client pair.
  const root = mkdtempSync(join(tmpdir(), "chart-agent-nats-"));
  try {
    const pki = makeTestPki(root);
    const at = (p: string) => join(root, p);
    const put = (p: string, text: string) => {
      mkdirSync(dirname(at(p)), { recursive: true });
      writeFileSync(at(p), text);
    };
    const pem = (f: string) => readFileSync(f, "utf8");
    for (const dir of ["/etc/gatehouse/nats-tls", "/etc/gatehouse/temporal-tls"]) {
      put(`${dir}/ca.crt`, pem(pki.caFile));
      put(`${dir}/tls.crt`, pem(pki.clientCertFile));
      put(`${dir}/tls.key`, pem(pki.clientKeyFile));
    }
    put("/etc/gatehouse/temporal-api-key/api-key", "FAKE-temporal-key\n");
    put("/etc/gatehouse/agent-keys/deployment", "FAKE-anthropic-key\n");
    put("/etc/gatehouse/agent-keys/workspaces/w9876543210", "FAKE-google-key\n");
    const configMap = find(objects, "ConfigMap", name("agent-models")) as K8sObject & {
      data: Record<string, string>;
    };
    put(
      "/etc/gatehouse/agent-models/models.yaml",
      configMap.data["models.yaml"]!.replaceAll("/etc/", `${root}/etc/`),
    );
    const rebased = Object.fromEntries(
      Object.entries(envOf(objects, "worker")).map(([k, v]) => [k, v.startsWith("/etc/") ? at(v) : v]),
    );
    const config = loadConfig(rebased);
    assert.ok(config.agent, "the agent is on");
    assert.equal(config.natsUrl, "tls://nats-0.nats:4443,tls://nats-1.nats:4443");
    assert.deepEqual(config.natsTls, {
      caFile: at("/etc/gatehouse/nats-tls/ca.crt"),
      certFile: at("/etc/gatehouse/nats-tls/tls.crt"),
      keyFile: at("/etc/gatehouse/nats-tls/tls.key"),
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("agent on: NetworkPolicies open exactly gateway → worker:7008, worker → kernel:7001, worker → NATS and worker → agent.egress (ports default 443)", async () => {
  const objects = await render(["minimal.yaml", "agent.yaml"]);
  assert.deepEqual(
    container(objects, "worker").ports.map((p) => [p.name, p.containerPort]),
    [
      ["grpc", 7008],
      ["ops", 9405],
    ],
  );
  assert.deepEqual(
    find(objects, "Service", name("worker")).spec.ports.map((p: { name: string; port: number }) => [
      p.name,
      p.port,
    ]),
    [
      ["grpc", 7008],
      ["ops", 9405],
    ],
  );
  assert.deepEqual(peers(rules(objects, "worker", "ingress"), "from"), ["gateway"]);
  assert.deepEqual(portsTo(objects, "worker", "ingress", "gateway"), [7008]);
  assert.deepEqual(portsTo(objects, "gateway", "egress", "worker"), [7008]);
  assert.deepEqual(portsTo(objects, "worker", "egress", "kernel"), [7001]);
  assert.deepEqual(peers(rules(objects, "kernel", "ingress"), "from"), ["gateway", "worker"]);
  assert.deepEqual(portsTo(objects, "kernel", "ingress", "worker"), [7001]);
  assert.deepEqual(egressOn(objects, "worker", 4222), [{ ports: [{ port: 4222, protocol: "TCP" }] }]);
  assert.deepEqual(ipRules(objects), [
    { cidrs: ["10.0.7.0/24"], ports: [8000] },
    { cidrs: ["160.79.104.0/23"], ports: [443] },
  ]);
  // No egress listed: the worker reaches no model (the docs and NOTES say so); nothing else opens.
  const empty = await template(["minimal.yaml", "agent.yaml"], [], ["--set-json", "agent.egress=[]"]);
  assert.ok(empty.ok, empty.stderr);
  const none = parseManifests(empty.stdout);
  assert.deepEqual(ipRules(none), []);
  assert.deepEqual(peers(rules(none, "worker", "egress"), "to"), [
    "gatekeeper-git",
    "gatekeeper-mcp",
    "kernel",
  ]);
});

test("agent: a missing model, endpoint or key is refused naming each value in one render", async () => {
  await refused(
    [],
    ["agent.enabled=true"],
    /agent: 1 value\(s\) to fix:\n {2}- agent\.model: agent\.enabled needs a model/,
  );
  await refused(
    [],
    ["agent.enabled=true", "agent.model=qwen3-coder"],
    /agent\.baseUrl: provider openai-compatible needs the endpoint/,
  );
  const err = await refused(
    [],
    [
      "agent.enabled=true",
      "agent.provider=google",
      "agent.model=gemini-2.5-pro",
      "agent.workspaces.w1.provider=anthropic",
      "agent.workspaces.w1.model=claude-sonnet-4-5",
      "agent.workspaces.w2.provider=openai-compatible",
      "agent.workspaces.w2.model=m",
    ],
    /agent: 3 value\(s\) to fix/,
  );
  assert.match(err, /- agent\.apiKey\.existingSecret: provider google needs a key: name an existing Secret/);
  assert.match(err, /- agent\.workspaces\.w1\.apiKey\.existingSecret: provider anthropic needs a key/);
  assert.match(err, /- agent\.workspaces\.w2\.baseUrl: provider openai-compatible needs the endpoint/);
  // Off, the same values are not checked.
  const off = await template(["minimal.yaml"], ["agent.model=qwen3-coder"]);
  assert.ok(off.ok, off.stderr);
});

test("agent: the schema refuses an unknown provider, an inline key, limits out of range, a bad CIDR or workspace id, and an unknown key, naming it", async () => {
  await refused(
    [],
    ["agent.provider=openai"],
    /\/agent\/provider.*value must be one of 'openai-compatible', 'anthropic', 'google'/s,
  );
  await refused([], ["agent.apiKey=sk-inline"], /\/agent\/apiKey.*got string, want object/s);
  await refused([], ["agent.maxSteps=0"], /\/agent\/maxSteps.*minimum: got 0, want 1/s);
  await refused([], ["agent.maxSteps=101"], /\/agent\/maxSteps.*maximum: got 101, want 100/s);
  await refused([], ["agent.maxResultBytes=100"], /\/agent\/maxResultBytes.*minimum: got 100, want 1,?024/s);
  await refused([], ["agent.egress[0].cidr=10.0.0.1"], /\/agent\/egress\/0\/cidr.*does not match pattern/s);
  await refused([], ["agent.egress[0].ports={0}"], /\/agent\/egress\/0\/ports\/0.*minimum: got 0, want 1/s);
  await refused([], ["agent.baseUrl=vllm:8000"], /\/agent\/baseUrl.*does not match pattern/s);
  await refused([], ["agent.workspaces.w1.model=m"], /\/agent\/workspaces\/w1.*missing property 'provider'/s);
  await refused(
    [],
    ["agent.workspaces.w\\.1.provider=google"],
    /\/agent\/workspaces.*does not match pattern/s,
  );
  await refused([], ["agent.modle=x"], /\/agent.*additional properties 'modle' not allowed/s);
});

test("helm lint --strict passes with the agent on, its NOTES (which warn when agent.egress is empty) included", async () => {
  for (const extra of [
    [],
    ["--set-json", "agent.egress=[]"],
    ["--set", "agent.model=", "--set", "agent.apiKey.existingSecret="],
  ]) {
    const r = await helm([
      "lint",
      CHART,
      "--strict",
      "--kube-version",
      KUBE_VERSION,
      "-f",
      valuesFile("minimal.yaml"),
      "-f",
      valuesFile("agent.yaml"),
      ...extra,
    ]);
    assert.ok(r.ok, `${extra.join(" ")}: ${r.stdout}${r.stderr}`);
  }
});
