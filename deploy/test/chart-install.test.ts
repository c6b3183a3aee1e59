/**
 * The chart on a real cluster (`npm run cluster -- up`: a real kube-apiserver and a node running Pods
 * under gVisor): server-side validation of the rendered objects, then `helm install` with every pod
 * Ready, `helm test`, a workspace driven through the gateway (memory MCP server connected, a snippet
 * that reads and writes, approval over the gateway's HTTP API, the write applied, `gatehouse verify`),
 * the runner's gVisor kernel, `helm upgrade` rolling every pod and keeping the data, and
 * `helm uninstall` leaving only the event store's claim and the caller-token Secret.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { startDevStack } from "@gatehouse/dev-stack";
import pino from "pino";
import {
  clusterEnv,
  ensureCluster,
  kubectl,
  kubectlOk,
  portForward,
  REPO,
  type TestCluster,
  waitFor,
} from "./cluster.ts";
import { ensureDeps } from "./deps.ts";
import { Gateway, type McpSession } from "./gateway-client.ts";
import { CHART, COMPONENTS, helm, KUBE_VERSION, valuesFile } from "./helm.ts";
import { cleanNamespace, ensureImages, prepareNamespace } from "./install.ts";
import { releasePods, allReady as waitAllReady } from "./release-pods.ts";

const NS = "gh-chart";
const RELEASE = "gh";
const TOKEN = "helm-install-approver-token-0123";
const run = promisify(execFile);

let cluster: TestCluster | undefined;
let imageArgs: string[] = [];
/** Figures printed at the end (docs/benchmarks.md). */
const figures: Record<string, number | string> = {};

before(async () => {
  cluster = await ensureCluster();
  const images = await ensureImages();
  if (images.buildMs) figures.imagesBuildAndLoadMs = images.buildMs;
  imageArgs = images.registry ? ["--set", `global.image.registry=${images.registry}`] : [];
  await ensureDeps();
  await prepareNamespace(NS);
});

after(async () => {
  console.log(`chart-install figures: ${JSON.stringify(figures)}`);
  await helm(["uninstall", RELEASE, "-n", NS, "--wait"], { env: clusterEnv() }).catch(() => {});
  await cleanNamespace(NS);
  await cluster?.stop();
});

const values = ["-f", valuesFile("local-cluster.yaml")];

/** Pods of the release by component: name, uid, ready. */
const pods = () => releasePods(NS, RELEASE);

/** Waits until each component has exactly one Ready pod (none terminating); returns their uids by component. */
const allReady = (timeoutMs: number) => waitAllReady(NS, RELEASE, timeoutMs);

/** p50 (ms, 0.1 ms) of 20 execute_code calls of a trivial snippet in `session`, after 3 unmeasured ones. */
async function executeCodeP50(session: McpSession): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 23; i++) {
    const s = performance.now();
    const r = await session.executeCode("export default async () => 1");
    assert.ok(r.ok, JSON.stringify(r));
    if (i >= 3) times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  return Math.round(times[10]! * 10) / 10;
}

/** Runs the CLI (apps/cli) against the installation through its gateway alone (GATEHOUSE_GATEWAY_URL + token). */
async function gatehouse(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  const { stdout } = await run("node", [`${REPO}/apps/cli/bin/gatehouse.js`, ...args], {
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  return stdout;
}

test("the rendered chart passes the API server's validation and PodSecurity restricted (kubectl apply --dry-run=server)", async () => {
  const r = await helm([
    "template",
    RELEASE,
    CHART,
    "-n",
    NS,
    "--kube-version",
    KUBE_VERSION,
    ...values,
    ...imageArgs,
  ]);
  assert.ok(r.ok, r.stderr);
  // The helm test Pods name the chart's ServiceAccount, which a dry run does not create: make it for the check.
  await kubectlOk(["-n", NS, "create", "serviceaccount", `${RELEASE}-gatehouse`]);
  const applied = await kubectl(["-n", NS, "apply", "--dry-run=server", "-f", "-"], { input: r.stdout });
  await kubectlOk(["-n", NS, "delete", "serviceaccount", `${RELEASE}-gatehouse`]);
  assert.ok(applied.ok, applied.stderr);
  assert.doesNotMatch(applied.stderr, /would violate PodSecurity/);
  assert.match(applied.stdout, /deployment\.apps\/gh-gatehouse-sandbox-runner created \(server dry run\)/);
  // The same check refuses what the schema cannot see, e.g. a port the API server rejects.
  const bad = await kubectl(["-n", NS, "apply", "--dry-run=server", "-f", "-"], {
    input: r.stdout.replace("protocol: TCP", "protocol: TCPX"),
  });
  assert.equal(bad.ok, false);
  assert.match(bad.stderr, /Unsupported value: "TCPX"/);
});

test("helm install: every pod Ready; helm test; a workspace end to end; upgrade keeps the data; uninstall keeps only the claim and the caller-token Secret", async (t) => {
  const t0 = Date.now();
  const install = await helm(
    ["install", RELEASE, CHART, "-n", NS, ...values, ...imageArgs, "--wait", "--timeout", "15m"],
    { env: clusterEnv(), timeoutMs: 16 * 60_000 },
  );
  assert.ok(install.ok, `${install.stderr}\n${(await kubectl(["-n", NS, "get", "pods,events"])).stdout}`);
  const firstPods = await allReady(60_000);
  figures.helmInstallToAllReadyMs = Date.now() - t0;
  assert.match(
    install.stdout,
    /kubectl -n gh-chart port-forward svc\/gh-gatehouse-gateway 8780:80/,
    "NOTES say how to reach the web app",
  );
  assert.match(install.stdout, /#token=<token>/, "NOTES say how to sign in");

  await t.test("the sandbox runner's pod runs under gVisor and reports isolation gvisor-pod", async () => {
    const pod = (await pods()).find((p) => p.component === "sandbox-runner")!;
    const spec = JSON.parse(await kubectlOk(["-n", NS, "get", "pod", pod.name, "-o", "json"])).spec;
    assert.equal(spec.runtimeClassName, "gvisor");
    const version = await kubectlOk([
      "-n",
      NS,
      "exec",
      pod.name,
      "--",
      "node",
      "-e",
      "process.stdout.write(require('fs').readFileSync('/proc/version','utf8'))",
    ]);
    figures.sandboxKernel = version.trim();
    assert.match(
      version,
      /gvisor|#1 SMP Sun Jan 10 15:06:54 PST 2016/i,
      `the gVisor kernel string: ${version}`,
    );
    const logs = await kubectlOk(["-n", NS, "logs", pod.name]);
    assert.match(logs, /gvisor-pod/, "the runner reports its isolation as gvisor-pod");
  });

  await t.test(
    "helm test passes (every /healthz, one snippet end to end) and prints what each pod checked",
    async () => {
      const r = await helm(["test", RELEASE, "-n", NS, "--timeout", "5m"], {
        env: clusterEnv(),
        timeoutMs: 6 * 60_000,
      });
      // helm prints the test pods' logs (helm.sh/hook-output-log-policy) on stderr.
      const out = r.stdout + r.stderr;
      assert.ok(r.ok, out);
      assert.match(out, /ok {3}snippet ran end to end/);
      for (const c of ["kernel", "approval", "worker", "gateway", "gatekeeper-mcp", "gatekeeper-git"]) {
        assert.match(out, new RegExp(`ok {3}${c}: `), `${c}'s /healthz`);
      }
    },
  );

  await t.test(
    "the chart's NetworkPolicies are enforced between its pods: listed flows connect, others are dropped",
    async () => {
      const svc = (c: string) => `${RELEASE}-gatehouse-${c}.${NS}.svc.cluster.local`;
      // [from component, to Service, port, wanted]: docs/helm.md's flow table. The names resolve through
      // the cluster DNS, so each probe also shows the DNS rule letting lookups through.
      const flows: [string, string, number, "connected" | "timeout"][] = [
        ["gateway", "kernel", 7001, "connected"],
        ["gateway", "approval", 7002, "connected"],
        ["kernel", "sandbox-runner", 7004, "connected"],
        ["worker", "gateway", 80, "timeout"],
        ["gatekeeper-mcp", "kernel", 7001, "timeout"],
        ["gateway", "sandbox-runner", 7004, "timeout"],
      ];
      const byComponent = new Map((await pods()).map((p) => [p.component, p.name]));
      const seen = await Promise.all(
        flows.map(async ([from, to, port]) => {
          const probe = `const s=require("net").connect({host:${JSON.stringify(svc(to))},port:${port},timeout:5000});
s.on("connect",()=>{console.log("connected");process.exit(0)});
s.on("timeout",()=>{console.log("timeout");process.exit(0)});
s.on("error",(e)=>{console.log("error "+e.code);process.exit(0)});`;
          const r = await kubectl(["-n", NS, "exec", byComponent.get(from)!, "--", "node", "-e", probe], {
            timeoutMs: 60_000,
          });
          return `${from} -> ${to}:${port} ${r.stdout.trim() || r.stderr.trim()}`;
        }),
      );
      assert.deepEqual(
        seen,
        flows.map(([from, to, port, want]) => `${from} -> ${to}:${port} ${want}`),
      );
    },
  );

  const gw = await portForward(NS, `${RELEASE}-gatehouse-gateway`, 80);
  const cliEnv = { GATEHOUSE_GATEWAY_URL: `http://${gw.local}`, GATEHOUSE_TOKEN: TOKEN };
  const gateway = new Gateway(`http://${gw.local}`, TOKEN);
  let workspace = "";
  let logLength = 0;
  try {
    await t.test(
      "through the gateway: memory server connected, a snippet reads and writes, approved, applied, verified",
      async () => {
        const ws = await gateway.request<{ id: string }>("POST", "/api/workspaces", { name: "chart-e2e" });
        workspace = ws.id;
        await gatehouse(cliEnv, ["connect", workspace, "mcp://memory"]);
        const session = await gateway.mcp(workspace);
        try {
          const exec = await session.executeCode(
            `export default async (env: any) => {
            const before = await env.MEMORY.read_graph({});
            const write = await env.MEMORY.create_entities({ entities: [{ name: "Chart", entityType: "test", observations: ["installed by helm"] }] });
            return { entitiesBefore: before.entities?.length ?? null, write };
          }`,
          );
          assert.ok(exec.ok, JSON.stringify(exec));
          assert.equal(exec.submitted.length, 1, JSON.stringify(exec));
          const actionId = exec.submitted[0]!.actionId;
          await gateway.request("POST", `/api/workspaces/${workspace}/actions/${actionId}/approve`, {});
          await waitFor(
            `action ${actionId} applied`,
            async () => {
              const a = await gateway.request<{ action: { status: string } }>(
                "GET",
                `/api/workspaces/${workspace}/actions/${actionId}`,
              );
              assert.notEqual(a.action.status, "failed", JSON.stringify(a));
              return a.action.status === "applied" ? true : undefined;
            },
            120_000,
          );
          const read = await session.executeCode(
            "export default async (env: any) => JSON.stringify(await env.MEMORY.read_graph({}))",
          );
          assert.ok(read.ok, JSON.stringify(read));
          assert.match(
            String(read.returnValue),
            /"name":"Chart"/,
            "the approved write reached the real memory server",
          );
          // executeCode through the cluster: gateway -> kernel -> gVisor runner (docs/benchmarks.md).
          figures.executeCodeP50MsThroughCluster = await executeCodeP50(session);
        } finally {
          await session.close();
        }
        const verify = await gatehouse(cliEnv, ["verify", workspace, "--json"]);
        assert.match(verify, /"ok":\s*true/, verify);
        const log = await gateway.request<{ entries?: unknown[]; items?: unknown[] }>(
          "GET",
          `/api/workspaces/${workspace}/log`,
        );
        logLength = (log.entries ?? log.items ?? []).length;
        assert.ok(logLength > 0, JSON.stringify(log).slice(0, 300));
      },
    );
  } finally {
    await gw.close();
  }

  await t.test(
    "baseline in the same run: execute_code p50 on gatehouse dev (one process, gVisor sandboxes)",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "gh-chart-dev-"));
      const stack = await startDevStack({ dataDir: dir, logger: pino({ level: "fatal" }) });
      try {
        const token = stack.devTokens.find((d) => d.subject === "dev-approver")?.token ?? "";
        const dev = new Gateway(stack.addresses.gateway, token);
        const ws = await dev.request<{ id: string }>("POST", "/api/workspaces", { name: "baseline" });
        const session = await dev.mcp(ws.id);
        try {
          figures.executeCodeP50MsOnGatehouseDev = await executeCodeP50(session);
          figures.devSandboxMode = stack.sandboxMode;
        } finally {
          await session.close();
        }
      } finally {
        await stack.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  await t.test(
    "helm upgrade with a changed value rolls every pod and keeps the workspaces and their logs",
    async () => {
      const r = await helm(
        [
          "upgrade",
          RELEASE,
          CHART,
          "-n",
          NS,
          ...values,
          ...imageArgs,
          "--set",
          "global.logLevel=debug",
          "--wait",
          "--timeout",
          "10m",
        ],
        { env: clusterEnv(), timeoutMs: 11 * 60_000 },
      );
      assert.ok(r.ok, r.stderr);
      const now = await allReady(120_000);
      for (const c of COMPONENTS) assert.notEqual(now.get(c), firstPods.get(c), `${c}'s pod was replaced`);
      const gw2 = await portForward(NS, `${RELEASE}-gatehouse-gateway`, 80);
      try {
        const g = new Gateway(`http://${gw2.local}`, TOKEN);
        const list = await g.request<{ workspaces: { id: string }[] }>("GET", "/api/workspaces");
        assert.ok(
          list.workspaces.some((w) => w.id === workspace),
          `workspace ${workspace} kept: ${JSON.stringify(list)}`,
        );
        const log = await g.request<{ entries?: unknown[]; items?: unknown[] }>(
          "GET",
          `/api/workspaces/${workspace}/log`,
        );
        assert.equal((log.entries ?? log.items ?? []).length, logLength, "the log is kept, entry for entry");
        const verify = await gatehouse(
          { GATEHOUSE_GATEWAY_URL: `http://${gw2.local}`, GATEHOUSE_TOKEN: TOKEN },
          ["verify", workspace, "--json"],
        );
        assert.match(verify, /"ok":\s*true/, verify);
      } finally {
        await gw2.close();
      }
    },
  );

  await t.test(
    "the kernel down for 45 s: once its new pod is Ready, the gateway recovers by itself (not after minutes of 503s)",
    async () => {
      // While the kernel is down the gateway's reconnect attempts fail and, by grpc-js's defaults,
      // come further apart each time (up to 120 s), so after the kernel is back the gateway would
      // answer 503 for a long while. The services cap that wait at 5 s (PEER_CHANNEL_OPTIONS) and a
      // request waits for the reconnect (callUnary).
      const gw3 = await portForward(NS, `${RELEASE}-gatehouse-gateway`, 80);
      try {
        const g = new Gateway(`http://${gw3.local}`, TOKEN);
        await g.request("GET", "/api/workspaces");
        await kubectlOk(["-n", NS, "scale", `deployment/${RELEASE}-gatehouse-kernel`, "--replicas=0"]);
        // Gone once the gateway says so (a terminating pod may still answer): 503 when the connection
        // is refused, 504 when the attempt hangs past the request's deadline.
        const unavailable = (err: Error) => {
          assert.match(err.message, /HTTP 503: .*"unavailable"|HTTP 504: .*"deadline_exceeded"/);
          return true;
        };
        await waitFor(
          "the gateway answering 503 with the kernel scaled to 0",
          () => g.request("GET", "/api/workspaces").then(() => undefined, unavailable),
          120_000,
        );
        // Requests meanwhile, as people's would be: each is refused so.
        const downUntil = Date.now() + 45_000;
        let refused = 0;
        while (Date.now() < downUntil) {
          await g.request("GET", "/api/workspaces").then(
            () => assert.fail("the gateway answered with the kernel down"),
            (err: Error) => {
              unavailable(err);
              refused++;
            },
          );
          await new Promise((r) => setTimeout(r, 1000));
        }
        assert.ok(refused > 0);
        await kubectlOk(["-n", NS, "scale", `deployment/${RELEASE}-gatehouse-kernel`, "--replicas=1"]);
        await allReady(180_000);
        // Measured here: answered at once in 1 of 3 runs; in the others the first request after Ready
        // still failed (a 503 with the connection refused, once a 504 after 30 s waiting for the
        // connection), so the check is that the gateway recovers by itself, and how fast.
        const back = Date.now();
        let failedAfterReady = 0;
        const list = await waitFor(
          "the gateway answering again",
          () =>
            g.request<{ workspaces: { id: string }[] }>("GET", "/api/workspaces").catch((err: Error) => {
              unavailable(err);
              failedAfterReady++;
              return undefined;
            }),
          120_000,
        );
        figures.gatewayAnswerAfterKernelReadyMs = Date.now() - back;
        figures.gatewayFailedRequestsAfterKernelReady = failedAfterReady;
        assert.ok(list.workspaces.some((w) => w.id === workspace));
      } finally {
        await gw3.close();
      }
    },
  );

  await t.test("helm uninstall leaves only the event store's claim and the caller-token Secret", async () => {
    const r = await helm(["uninstall", RELEASE, "-n", NS, "--wait", "--timeout", "5m"], {
      env: clusterEnv(),
      timeoutMs: 6 * 60_000,
    });
    assert.ok(r.ok, r.stderr);
    assert.match(r.stdout + r.stderr, /gh-gatehouse-data/, "helm says it kept the claim");
    assert.match(r.stdout + r.stderr, /gh-gatehouse-caller-token/, "and the caller-token Secret");
    const left = await waitFor(
      "the release's objects gone",
      async () => {
        const out = await kubectlOk([
          "-n",
          NS,
          "get",
          "deploy,rs,pod,svc,secret,configmap,networkpolicy,pdb,serviceaccount,pvc",
          "-l",
          `app.kubernetes.io/instance=${RELEASE}`,
          "-o",
          "name",
        ]);
        const names = out.split("\n").filter(Boolean);
        const kept = (n: string) =>
          n.startsWith("persistentvolumeclaim/") || n === "secret/gh-gatehouse-caller-token";
        return names.every(kept) ? names.sort() : undefined;
      },
      120_000,
    );
    assert.deepEqual(left, ["persistentvolumeclaim/gh-gatehouse-data", "secret/gh-gatehouse-caller-token"]);
  });
});
