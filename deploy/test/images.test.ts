/**
 * The OCI images (deploy/images): `npm run images` builds both archives; each is unpacked with umoci and
 * run as a Pod with readOnlyRootFilesystem would run it — root read-only, /tmp and /data as volumes,
 * uid 65532 — against a real Temporal dev server and a real nats-server: every component answers
 * /healthz, git and ssh run, the sandbox runner runs a snippet, and refuses to claim gVisor outside it.
 * Needs root (mount namespaces), apt (Debian's packages), umoci (npm run cluster builds it) and the
 * Temporal CLI and nats-server (npm run setup).
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { type NatsServerProcess, startNatsServer } from "@gatehouse/live-notices/nats-server";
import { executeSnippet } from "@gatehouse/sandbox-runner";
import { waitUntil } from "@gatehouse/service-kit";
import { freePort, startTemporalDevServer, type TemporalDevServer } from "@gatehouse/temporal-dev";
import type { BuiltImage } from "../images/build.ts";
import { NONROOT_UID, SANDBOX_IMAGE, SERVICE_COMPONENTS, SERVICES_IMAGE, VERSION } from "../images/spec.ts";
import {
  buildImages,
  execInRootfs,
  freshVolumes,
  type RootfsProcess,
  removeTempDirs,
  runInRootfs,
  stop,
  type Unpacked,
  unpack,
  waitHealthy,
} from "./rootfs.ts";

const run = promisify(execFile);
/** runsc on PATH, or null. */
const RUNSC =
  (process.env.PATH ?? "")
    .split(delimiter)
    .map((d) => join(d, "runsc"))
    .find((p) => existsSync(p)) ?? null;
const REQUIRE_GVISOR = process.env.CI === "true" || process.env.GATEHOUSE_REQUIRE_GVISOR === "1";

/** Size budgets, MiB: what the archive (compressed) and the unpacked root file system may reach. */
const BUDGET = {
  services: { archive: 180, rootfs: 420 },
  sandbox: { archive: 70, rootfs: 170 },
} as const;

let built: Record<string, BuiltImage>;
const unpacked: Record<string, Unpacked> = {};
let temporal: TemporalDevServer | undefined;
let nats: NatsServerProcess | undefined;
const running: RootfsProcess[] = [];

before(async () => {
  built = buildImages();
  for (const kind of ["services", "sandbox"]) unpacked[kind] = unpack(built[kind]!.archive, VERSION);
});

after(async () => {
  await Promise.all(running.map((p) => stop(p)));
  await nats?.close();
  await temporal?.close();
  removeTempDirs();
});

test("both archives: named docker.io/gatehouse/<image>:<version>, uid 65532, the documented entrypoint and env, within the size budget", () => {
  for (const spec of [SERVICES_IMAGE, SANDBOX_IMAGE]) {
    const b = built[spec.kind]!;
    assert.equal(b.ref, `docker.io/${spec.repository}:${VERSION}`);
    const index = JSON.parse(
      readFileSync(join(unpacked[spec.kind]!.bundle, "..", "layout", "index.json"), "utf8"),
    ) as { manifests: Array<{ annotations: Record<string, string> }> };
    assert.equal(index.manifests[0]!.annotations["io.containerd.image.name"], b.ref);
    const { process: proc } = unpacked[spec.kind]!.config;
    assert.deepEqual(proc.user, { uid: NONROOT_UID, gid: NONROOT_UID }, "never root");
    assert.deepEqual(proc.args, [...spec.entrypoint, ...spec.cmd]);
    for (const e of spec.env) assert.ok(proc.env.includes(e), `${spec.kind}: ${e}`);
    const rootfs = unpacked[spec.kind]!.rootfs;
    assert.match(
      readFileSync(join(rootfs, "etc/passwd"), "utf8"),
      new RegExp(`^nonroot:x:${NONROOT_UID}:`, "m"),
    );
    assert.equal(statSync(join(rootfs, "data")).uid, NONROOT_UID, "/data belongs to the nonroot user");
    assert.ok(
      b.archiveBytes / 2 ** 20 < BUDGET[spec.kind].archive,
      `${spec.kind} archive ${b.archiveBytes} B`,
    );
    assert.ok(b.rootfsBytes / 2 ** 20 < BUDGET[spec.kind].rootfs, `${spec.kind} root fs ${b.rootfsBytes} B`);
  }
  // The sandbox image carries no shell, git or npm: only what the runner needs.
  for (const absent of ["bin/sh", "usr/bin/git", "usr/bin/npx"]) {
    assert.equal(existsSync(join(unpacked.sandbox!.rootfs, absent)), false, absent);
  }
});

test("services image: gatehouse-service lists its components, refuses an unknown one; git, ssh and npx run as uid 65532 on the read-only root", async () => {
  const { rootfs, config } = unpacked.services!;
  const env = config.process.env;
  const help = await execInRootfs(rootfs, freshVolumes(), config.process.args, env);
  assert.equal(help.code, 0, help.output);
  for (const c of SERVICE_COMPONENTS) assert.match(help.output, new RegExp(`\\b${c}\\b`));
  const unknown = await execInRootfs(rootfs, freshVolumes(), [...SERVICES_IMAGE.entrypoint, "kernal"], env);
  assert.equal(unknown.code, 2);
  assert.match(unknown.output, /unknown component "kernal"; expected one of: kernel, approval/);

  const volumes = freshVolumes();
  const git = await execInRootfs(
    rootfs,
    volumes,
    [
      "/bin/sh",
      "-c",
      "git init -q /data/repo && git -C /data/repo config user.email a@b && git -C /data/repo config user.name a && echo x > /data/repo/f && git -C /data/repo add f && git -C /data/repo commit -qm one && git -C /data/repo log --format=%s && ssh -V && npx --version; echo x > /app/x",
    ],
    env,
  );
  assert.match(git.output, /^one$/m, git.output);
  assert.match(git.output, /OpenSSH_/);
  assert.match(git.output, /^\d+\.\d+\.\d+$/m, "npx answers its version");
  assert.match(git.output, /Read-only file system/, "the root is read-only");
  assert.equal(statSync(join(volumes.data, "repo", "f")).uid, NONROOT_UID, "files are written as uid 65532");
});

test("services image: every component starts on the read-only root as uid 65532 and answers /healthz (real Temporal and NATS)", async () => {
  temporal = await startTemporalDevServer();
  nats = await startNatsServer();
  const { rootfs, config } = unpacked.services!;
  const volumes = freshVolumes();
  writeFileSync(join(volumes.tmp, "registry.yaml"), "servers: {}\n");
  writeFileSync(join(volumes.tmp, "postgres-registry.yaml"), "servers: {}\n");
  writeFileSync(
    join(volumes.tmp, "tokens.yaml"),
    `tokens:\n  - token: ${randomBytes(16).toString("hex")}\n    subject: alice\n    roles: [approver]\n`,
  );
  const ports = Object.fromEntries(
    await Promise.all(
      [
        "kernel",
        "kernelOps",
        "approval",
        "approvalOps",
        "workerOps",
        "gateway",
        "mcp",
        "mcpOps",
        "git",
        "gitOps",
        "postgres",
        "postgresOps",
      ].map(async (k) => [k, await freePort()] as const),
    ),
  );
  const secret = randomBytes(32).toString("hex");
  const gatekeepers = `mcp=127.0.0.1:${ports.mcp},git=127.0.0.1:${ports.git},postgres=127.0.0.1:${ports.postgres}`;
  const components: Array<{ c: (typeof SERVICE_COMPONENTS)[number]; health: number; env: string[] }> = [
    {
      c: "approval",
      health: ports.approvalOps!,
      env: [
        `APPROVAL_ADDR=0.0.0.0:${ports.approval}`,
        `METRICS_ADDR=0.0.0.0:${ports.approvalOps}`,
        `GATEHOUSE_CALLER_TOKEN_SECRET=${secret}`,
        `TEMPORAL_ADDRESS=${temporal.address}`,
        `GATEKEEPER_ADDRESSES=${gatekeepers}`,
        `NATS_URL=${nats.url}`,
      ],
    },
    {
      c: "worker",
      health: ports.workerOps!,
      env: [
        `WORKER_METRICS_ADDR=0.0.0.0:${ports.workerOps}`,
        `TEMPORAL_ADDRESS=${temporal.address}`,
        `GATEKEEPER_ADDRESSES=${gatekeepers}`,
      ],
    },
    {
      c: "kernel",
      health: ports.kernelOps!,
      env: [
        `KERNEL_ADDR=0.0.0.0:${ports.kernel}`,
        `KERNEL_METRICS_ADDR=0.0.0.0:${ports.kernelOps}`,
        `GATEHOUSE_CALLER_TOKEN_SECRET=${secret}`,
        `TEMPORAL_ADDRESS=${temporal.address}`,
        `GATEKEEPER_ADDRESSES=${gatekeepers}`,
      ],
    },
    {
      c: "gateway",
      health: ports.gateway!,
      env: [
        `GATEWAY_ADDR=0.0.0.0:${ports.gateway}`,
        `APPROVAL_ADDRESS=127.0.0.1:${ports.approval}`,
        `KERNEL_ADDRESS=127.0.0.1:${ports.kernel}`,
        `NATS_URL=${nats.url}`,
        "GATEWAY_DEV_TOKENS_FILE=/tmp/tokens.yaml",
      ],
    },
    {
      c: "gatekeeper-mcp",
      health: ports.mcpOps!,
      env: [
        `GATEKEEPER_MCP_ADDR=0.0.0.0:${ports.mcp}`,
        `GATEKEEPER_MCP_METRICS_ADDR=0.0.0.0:${ports.mcpOps}`,
        `APPROVAL_ADDRESS=127.0.0.1:${ports.approval}`,
        "GATEKEEPER_MCP_REGISTRY=/tmp/registry.yaml",
      ],
    },
    {
      c: "gatekeeper-git",
      health: ports.gitOps!,
      env: [
        `GATEKEEPER_GIT_ADDR=0.0.0.0:${ports.git}`,
        `GATEKEEPER_GIT_METRICS_ADDR=0.0.0.0:${ports.gitOps}`,
        `APPROVAL_ADDRESS=127.0.0.1:${ports.approval}`,
        "GATEKEEPER_GIT_ALLOWED_ROOTS=/data/repos",
        "GATEKEEPER_GIT_CACHE_DIR=/data/git-cache",
      ],
    },
    {
      // Its parser (libpg-query's WebAssembly) is loaded at start: a /healthz answer proves the image carries it.
      c: "gatekeeper-postgres",
      health: ports.postgresOps!,
      env: [
        `GATEKEEPER_POSTGRES_ADDR=0.0.0.0:${ports.postgres}`,
        `GATEKEEPER_POSTGRES_METRICS_ADDR=0.0.0.0:${ports.postgresOps}`,
        `APPROVAL_ADDRESS=127.0.0.1:${ports.approval}`,
        "GATEKEEPER_POSTGRES_REGISTRY=/tmp/postgres-registry.yaml",
      ],
    },
  ];
  assert.deepEqual(
    components.map((x) => x.c).sort(),
    [...SERVICE_COMPONENTS].sort(),
    "every component is started",
  );
  for (const { c, health, env } of components) {
    const p = runInRootfs(
      rootfs,
      volumes,
      [...SERVICES_IMAGE.entrypoint, c],
      [...config.process.env, ...env],
    );
    running.push(p);
    await waitHealthy(c, health, p);
  }
  // The gateway serves the web app from the image.
  const page = await fetch(`http://127.0.0.1:${ports.gateway}/`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<div id="root">/);
  assert.ok(existsSync(join(volumes.data, "events.sqlite")), "the event store is on the /data volume");
  for (const p of running.splice(0)) assert.equal(await stop(p), 0, `graceful SIGTERM:\n${p.output()}`);
});

test("sandbox image: the runner runs a snippet on the read-only root as uid 65532, and refuses SANDBOX_MODE=gvisor-pod outside gVisor", async () => {
  const { rootfs, config } = unpacked.sandbox!;
  const [grpc, ops] = [await freePort(), await freePort()];
  const refused = await execInRootfs(rootfs, freshVolumes(), config.process.args, [
    ...config.process.env,
    "SANDBOX_MODE=gvisor-pod",
  ]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.output, /SANDBOX_MODE=gvisor-pod .*kernel is not gVisor's.*runtimeClassName: gvisor/);

  const p = runInRootfs(rootfs, freshVolumes(), config.process.args, [
    ...config.process.env,
    "SANDBOX_MODE=none",
    "SANDBOX_INSECURE_NO_GVISOR=1",
    `SANDBOX_RUNNER_ADDR=0.0.0.0:${grpc}`,
    `SANDBOX_RUNNER_METRICS_ADDR=0.0.0.0:${ops}`,
  ]);
  running.push(p);
  await waitHealthy("sandbox-runner", ops, p);
  const r = await executeSnippet(`127.0.0.1:${grpc}`, {
    executionId: "image-snippet",
    workspaceId: "ws-image",
    code: "export default () => [6 * 7, typeof process]",
  });
  assert.equal(r.returnJson, '[42,"undefined"]', JSON.stringify(r));
  assert.equal(await stop(p), 0, p.output());
  running.splice(running.indexOf(p), 1);
});

test("sandbox image under real gVisor (runsc runs the unpacked bundle: read-only root, no network, uid 65532): SANDBOX_MODE=gvisor-pod is verified and reported, and its isolate host starts inside", {
  skip:
    RUNSC || REQUIRE_GVISOR ? false : "runsc not on PATH (set GATEHOUSE_REQUIRE_GVISOR=1 to fail instead)",
}, async () => {
  assert.ok(RUNSC, "runsc is required: install gVisor (npm run setup)");
  const { bundle } = unpacked.sandbox!;
  const configPath = join(bundle, "config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8")) as Unpacked["config"] & {
    process: { terminal?: boolean };
  };
  config.root.readonly = true;
  config.process.terminal = false;
  config.process.env.push("SANDBOX_MODE=gvisor-pod", "SANDBOX_WARM=1");
  config.mounts.push({
    destination: "/tmp",
    type: "tmpfs",
    source: "tmpfs",
    options: ["nosuid", "nodev", "mode=1777"],
  });
  writeFileSync(configPath, JSON.stringify(config));
  const state = mkdtempSync(join(tmpdir(), "gatehouse-runsc-"));
  const id = `gatehouse-image-${process.pid}`;
  const runsc = (args: string[]) => [RUNSC, "--root", state, ...args];
  const [cmd, ...args] = runsc(["--network=none", "--ignore-cgroups", "run", "--bundle", bundle, id]);
  const container = spawn(cmd!, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  container.stdout.on("data", (d: Buffer) => {
    output += d.toString();
  });
  container.stderr.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => container.once("exit", (code) => resolve(code)));
  /** Runs `node -e script` in the running container; its stdout. */
  const nodeIn = async (script: string) => {
    const [c, ...a] = runsc([
      "exec",
      "--user",
      `${NONROOT_UID}:${NONROOT_UID}`,
      id,
      "/usr/bin/node",
      "-e",
      script,
    ]);
    return (await run(c!, a, { timeout: 60_000 })).stdout;
  };
  try {
    type RunnerStatus = { mode?: string; sandboxes?: Array<{ state: string; backend: string }> };
    let status: RunnerStatus = {};
    await waitUntil(
      "a warm sandbox in the runner under runsc",
      async () => {
        assert.equal(container.exitCode, null, `the runner exited:\n${output}`);
        if (!output.includes('"event":"health_listening"')) return false;
        status = JSON.parse(
          await nodeIn('fetch("http://127.0.0.1:9474/status").then((r) => r.text()).then(console.log)'),
        ) as RunnerStatus;
        return status.sandboxes?.some((s) => s.state === "warm") ?? false;
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last status ${JSON.stringify(status)}\n${output}`);
    });
    assert.equal(status.mode, "gvisor-pod");
    assert.equal(status.sandboxes![0]!.backend, "process", "isolate hosts are child processes in the pod");
    assert.match(output, /"event":"listening".*"mode":"gvisor-pod"/);
    const kernel = await nodeIn('console.log(require("fs").readFileSync("/proc/version", "utf8"))');
    assert.match(kernel, /Sun Jan 10 15:06:54 PST 2016|gvisor/, "the kernel the runner verified is gVisor's");
    // The runner (pid 1 of the sandbox) runs as the image's user.
    const uid = await nodeIn(
      'console.log(/^Uid:\\s+(\\d+)/m.exec(require("fs").readFileSync("/proc/1/status", "utf8"))[1])',
    );
    assert.equal(uid.trim(), String(NONROOT_UID));
  } finally {
    const [k, ...ka] = runsc(["kill", id, "SIGTERM"]);
    await run(k!, ka).catch(() => undefined);
    const timer = setTimeout(() => container.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
    const [d, ...da] = runsc(["delete", "-force", id]);
    await run(d!, da).catch(() => undefined);
    rmSync(state, { recursive: true, force: true });
  }
});
