/**
 * `npm run cluster -- up|status|down` against the real local cluster (deploy/cluster/*.sh): a real
 * etcd, kube-apiserver, controller manager, scheduler, containerd with the gVisor shim, kubelet,
 * kube-proxy and CoreDNS on this host. Proves that a Pod with `runtimeClassName: gvisor` runs on
 * gVisor's kernel (a runc Pod next to it shows the host's), that a Pod resolves a Service's name
 * through CoreDNS and reaches it over its Service IP (kube-proxy), that a second `up` reuses the
 * running cluster, and that `status` reports it. The cluster is left up only if it was up before.
 * Needs root and the cluster's binaries (scripts/setup.sh builds them; `up` builds what is missing).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { waitUntil } from "@gatehouse/service-kit";

const CLUSTER = join(import.meta.dirname, "../cluster/cluster.sh");
const NS = `cluster-test-${process.pid}`;
const BUSYBOX = "gatehouse.local/busybox:1.35";

function cluster(...args: string[]) {
  // up may build what is missing (about 25 minutes cold on 2 cores)
  return spawnSync("bash", [CLUSTER, ...args], { encoding: "utf8", timeout: 60 * 60_000 });
}
const kubeconfig = /export KUBECONFIG=(\S+)/.exec(cluster("env").stdout)?.[1] ?? "";

function kubectl(args: string[], input?: string) {
  const r = spawnSync("kubectl", ["--kubeconfig", kubeconfig, ...args], {
    encoding: "utf8",
    input,
    timeout: 120_000,
  });
  return { ...r, out: r.stdout.trim() };
}
function kubectlOk(args: string[], input?: string): string {
  const r = kubectl(args, input);
  assert.equal(r.status, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
  return r.out;
}

/** Runs a Pod to completion and returns its log. */
async function runPod(name: string, spec: Record<string, unknown>): Promise<string> {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NS },
    spec: { restartPolicy: "Never", ...spec },
  };
  kubectlOk(["apply", "-f", "-"], JSON.stringify(pod));
  const phase = await waitUntil(
    `pod ${name} to finish`,
    () => {
      const p = kubectl(["-n", NS, "get", "pod", name, "-o", "jsonpath={.status.phase}"]).out;
      return p === "Succeeded" || p === "Failed" ? p : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
  const log = kubectlOk(["-n", NS, "logs", name]);
  assert.equal(
    phase,
    "Succeeded",
    `pod ${name} failed; its log:\n${log}\n${kubectl(["-n", NS, "describe", "pod", name]).out}`,
  );
  return log;
}
const container = (command: string[]) => ({
  name: "main",
  image: BUSYBOX,
  imagePullPolicy: "Never",
  command,
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
});

let wasUp = false;
before(() => {
  wasUp = cluster("status").status === 0;
  const up = cluster("up");
  assert.equal(up.status, 0, `cluster up failed:\n${up.stdout}\n${up.stderr}`);
  kubectlOk(["create", "namespace", NS]);
});
after(() => {
  kubectl(["delete", "namespace", NS, "--wait=false"]);
});

test("a Pod with runtimeClassName gvisor runs on gVisor's kernel; a runc Pod next to it on the host's", async () => {
  const show = ["sh", "-c", "cat /proc/version; dmesg 2>&1 | head -3"];
  const gvisor = await runPod("kernel-gvisor", { runtimeClassName: "gvisor", containers: [container(show)] });
  assert.match(gvisor, /gVisor/i, `no gVisor in the gvisor Pod's kernel output:\n${gvisor}`);
  const runc = await runPod("kernel-runc", { containers: [container(show)] });
  const hostVersion = spawnSync("cat", ["/proc/version"], { encoding: "utf8" }).stdout.trim();
  assert.equal(runc.split("\n")[0], hostVersion);
  assert.doesNotMatch(runc, /gVisor/i);
  assert.notEqual(gvisor.split("\n")[0], hostVersion);
});

test("a Pod resolves a Service's name through CoreDNS and reaches it over its Service IP", async () => {
  const labels = { app: "web" };
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: NS },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              ...container([
                "sh",
                "-c",
                "mkdir -p /tmp/www && echo served-by-web > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www",
              ]),
              ports: [{ containerPort: 8080 }],
              readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      },
    },
  };
  const service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: NS },
    spec: { selector: labels, ports: [{ port: 80, targetPort: 8080 }] },
  };
  kubectlOk(
    ["apply", "-f", "-"],
    JSON.stringify({ apiVersion: "v1", kind: "List", items: [deployment, service] }),
  );
  await waitUntil(
    "deployment web to be Ready",
    () => kubectl(["-n", NS, "get", "deploy", "web", "-o", "jsonpath={.status.readyReplicas}"]).out === "1",
    { timeoutMs: 180_000, intervalMs: 500 },
  );
  const clusterIP = kubectlOk(["-n", NS, "get", "svc", "web", "-o", "jsonpath={.spec.clusterIP}"]);
  assert.match(clusterIP, /^10\.96\.\d+\.\d+$/);
  const name = `web.${NS}.svc.cluster.local`;
  // busybox's nslookup asks CoreDNS itself; nc then speaks HTTP to the Service IP (Debian's static busybox
  // wget crashes in glibc's static resolver)
  const script = `ip=$(nslookup ${name} | sed -n 's/^Address: *//p' | tail -1) && echo "resolved $ip" && printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 10 "$ip" 80`;
  const log = await runPod("client", {
    runtimeClassName: "gvisor",
    containers: [container(["sh", "-c", script])],
  });
  assert.match(
    log,
    new RegExp(`^resolved ${clusterIP.replaceAll(".", "\\.")}$`, "m"),
    `${name} did not resolve to ${clusterIP}:\n${log}`,
  );
  assert.match(log, /served-by-web/);
});

test("a second up reuses the running cluster and status reports every component up", () => {
  const before = cluster("status");
  assert.equal(before.status, 0, before.stdout);
  const up = cluster("up");
  assert.equal(up.status, 0, up.stderr);
  for (const c of [
    "etcd",
    "kube-apiserver",
    "containerd",
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "kube-proxy",
    "kube-network-policies",
  ]) {
    const pid = new RegExp(`^${c} +up +pid (\\d+)$`, "m").exec(before.stdout)?.[1];
    assert.ok(pid, `status did not report ${c} up:\n${before.stdout}`);
    assert.match(up.stdout, new RegExp(`${c}: reusing pid ${pid}\\b`));
  }
  assert.doesNotMatch(up.stdout, /starting/);
  const after = cluster("status");
  assert.equal(after.stdout, before.stdout);
  assert.match(after.stdout, /^node localhost +Ready$/m);
  assert.match(after.stdout, /^coredns +Ready$/m);
  assert.match(after.stdout, new RegExp(`^kubeconfig +${kubeconfig.replaceAll("/", "\\/")}$`, "m"));
});

test("down stops every component it started and removes the bridge (only when this test started the cluster)", (t) => {
  if (wasUp) {
    t.skip("the cluster was up before this test: left running");
    return;
  }
  kubectl(["delete", "namespace", NS, "--wait=false"]);
  const down = cluster("down");
  assert.equal(down.status, 0, down.stderr);
  const status = cluster("status");
  assert.equal(status.status, 3);
  assert.doesNotMatch(status.stdout, / up +pid/);
  assert.notEqual(spawnSync("ip", ["link", "show", "gh-cni0"]).status, 0, "the CNI bridge is still there");
  assert.notEqual(
    spawnSync("nft", ["list", "table", "inet", "kube-network-policies"]).status,
    0,
    "kube-network-policies' nftables table is still there",
  );
  const run = dirname(kubeconfig);
  const mounts = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((l) => l.split(" ")[4]?.startsWith(`${run}/`));
  assert.deepEqual(mounts, [], "mounts left under the cluster's run folder");
  const left = readdirSync("/proc").filter((p) => {
    if (!/^\d+$/.test(p)) return false;
    try {
      return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(`${run}/`);
    } catch {
      return false;
    }
  });
  assert.deepEqual(left, [], "processes still running with the cluster's run folder in their command line");
  const nat = spawnSync("iptables-save", ["-t", "nat"], { encoding: "utf8" }).stdout;
  assert.doesNotMatch(
    nat,
    /KUBE-SERVICES|name: \\?"gatehouse\\?"/,
    "kube-proxy's or the CNI's rules are still there",
  );
  const again = cluster("down");
  assert.equal(again.status, 0, again.stderr);
});
