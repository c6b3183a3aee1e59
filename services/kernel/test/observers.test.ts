/**
 * AddObserver against a REAL gatekeeper-mcp (its `main.ts` run as a process, the real memory MCP
 * server from npm behind it; strategy A refuses every observer) and a test double standing in for
 * a gatekeeper whose strategy allows (registered as the "git" kind, so `git+file://` URLs reach
 * it; the git gatekeeper's own CheckObserver is built and tested in services/gatekeeper-git).
 * The kernel runs in-process over a SQLite event store in a temp dir; its logs are captured.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { type EventStore, openSqliteEventStore } from "@gatehouse/event-store";
import {
  type AddObserverRequest,
  type AddObserverResponse,
  type CheckObserverRequest,
  type GatekeeperServer,
  GatekeeperService,
  KernelClient,
  ObserverAdded,
} from "@gatehouse/proto";
import { callUnary, type UnaryMethod, waitUntil } from "@gatehouse/service-kit";
import { credentials, Server, ServerCredentials, type ServiceError, status } from "@grpc/grpc-js";
import pino from "pino";
import { type RunningKernel, startKernel } from "../src/index.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const GK_MCP_MAIN = join(ROOT, "services/gatekeeper-mcp/src/main.ts");
const MEMORY_SERVER = join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");

const REPO_CREDENTIAL = "alice:ghp_repo-credential-0123456789";
const MEMORY_CREDENTIAL = "mem-credential-9876543210";
const DOCS_CREDENTIAL = "alice:ghp_docs-credential-5555555555";

/** The allowing double: records every CheckObserver it answers; `hold` delays an answer. */
class AllowingGatekeeper {
  readonly checks: CheckObserverRequest[] = [];
  /** Awaited before each CheckObserver answer (lets a test change the workspace meanwhile). */
  hold: (req: CheckObserverRequest) => Promise<void> = async () => {};
  /** URLs whose check fails with UNAVAILABLE, quoting the credential (a careless gatekeeper). */
  readonly unavailable = new Set<string>();
  /** URLs whose check answers with a reason quoting the credential (a careless gatekeeper). */
  readonly echoing = new Set<string>();
  port = 0;
  readonly #server = new Server();

  async start(): Promise<this> {
    const impl: Partial<GatekeeperServer> = {
      resolveResource: (call, cb) => {
        const name =
          call.request.name || /([a-z]+)\.git/.exec(call.request.url)?.[1]?.toUpperCase() || "REPO";
        cb(null, {
          binding: name,
          trust: "byo",
          dts: `interface ${name} {}`,
          methods: [],
          url: call.request.url,
          actionKinds: { kinds: [] },
        });
      },
      checkObserver: (call, cb) => {
        const req = call.request;
        this.checks.push(req);
        this.hold(req).then(() => {
          if (this.unavailable.has(req.url)) {
            cb({ code: status.UNAVAILABLE, details: `remote refused ${req.credential}` });
          } else if (this.echoing.has(req.url)) {
            cb(null, { allowed: true, reason: `B: ${req.credential} can read ${req.url}` });
          } else {
            cb(null, { allowed: true, reason: `B: their credentials can read ${req.url}` });
          }
        });
      },
    };
    const unimplemented = (_c: unknown, cb: (e: Partial<ServiceError>) => void) =>
      cb({ code: status.UNIMPLEMENTED, details: "not used by this test" });
    this.#server.addService(GatekeeperService, {
      openSession: (call) => call.emit("error", { code: status.UNIMPLEMENTED }),
      applyAction: (call) => call.emit("error", { code: status.UNIMPLEMENTED }),
      actionRejected: unimplemented,
      prepareRevert: unimplemented,
      resolveResource: unimplemented,
      checkObserver: unimplemented,
      ...impl,
    } as GatekeeperServer);
    this.port = await new Promise<number>((res, rej) =>
      this.#server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) =>
        e ? rej(e) : res(p),
      ),
    );
    return this;
  }

  close(): void {
    this.#server.forceShutdown();
  }
}

let dir: string;
let store: EventStore;
let mcp: ChildProcess;
let mcpOutput = "";
let allowing: AllowingGatekeeper;
let kernel: RunningKernel;
let client: KernelClient;
const kernelLog: string[] = [];

/** Starts services/gatekeeper-mcp's main.ts with a registry of the real memory server; resolves its address. */
async function startMcpGatekeeperProcess(): Promise<string> {
  assert.ok(
    existsSync(MEMORY_SERVER),
    `the memory MCP server is not installed at ${MEMORY_SERVER}; run npm install`,
  );
  const registry = join(dir, "registry.yaml");
  // JSON is YAML.
  writeFileSync(
    registry,
    JSON.stringify({
      servers: {
        memory: {
          command: process.execPath,
          args: [MEMORY_SERVER],
          env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
          vetted: true,
        },
      },
    }),
  );
  mcp = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", GK_MCP_MAIN], {
    env: {
      PATH: process.env.PATH ?? "",
      // Not reached: CheckObserver and ResolveResource never call the approval service.
      APPROVAL_ADDRESS: "127.0.0.1:1",
      GATEKEEPER_MCP_REGISTRY: registry,
      GATEKEEPER_MCP_ADDR: "127.0.0.1:0",
      GATEKEEPER_MCP_METRICS_ADDR: "127.0.0.1:0",
      LOG_LEVEL: "trace",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  mcp.stdout?.on("data", (d) => {
    mcpOutput += d;
  });
  mcp.stderr?.on("data", (d) => {
    mcpOutput += d;
  });
  return waitUntil("gatekeeper-mcp's start-up line", () => {
    if (mcp.exitCode !== null) throw new Error(`gatekeeper-mcp exited with ${mcp.exitCode}:\n${mcpOutput}`);
    return /"grpc":"([^"]+)"/.exec(mcpOutput)?.[1];
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "kernel-observers-"));
  store = openSqliteEventStore(join(dir, "events.sqlite"));
  allowing = await new AllowingGatekeeper().start();
  const mcpAddress = await startMcpGatekeeperProcess();
  kernel = await startKernel({
    store,
    callerTokenSecret: "k".repeat(32),
    gatekeepers: { mcp: mcpAddress, git: `127.0.0.1:${allowing.port}` },
    sandboxRunnerAddress: "127.0.0.1:1",
    logger: pino({ level: "trace" }, { write: (line: string) => kernelLog.push(line) }),
  });
  client = new KernelClient(`127.0.0.1:${kernel.port}`, credentials.createInsecure());
});

after(async () => {
  client?.close();
  await kernel?.close();
  allowing?.close();
  if (mcp && mcp.exitCode === null) {
    const exited = new Promise((r) => mcp.once("exit", r));
    mcp.kill("SIGTERM");
    await exited;
  }
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

function unary<Req, Res>(method: UnaryMethod<Req, Res>, req: Req): Promise<Res> {
  return callUnary(client, method, req);
}

async function workspace(...urls: string[]): Promise<string> {
  const ws = await unary(client.createWorkspace, { name: "observers", owner: "user:bob", members: [] });
  for (const url of urls) await unary(client.introduceResource, { workspaceId: ws.id, url, name: "" });
  return ws.id;
}

const addObserver = (req: Partial<AddObserverRequest>) =>
  unary<AddObserverRequest, AddObserverResponse>(client.addObserver, {
    workspaceId: "",
    observer: "user:alice",
    credentials: {},
    addedBy: "user:bob",
    ...req,
  });

const revisionOf = (ws: string) => store.streamRevision(`workspace-${ws}`);

test("every gatekeeper allowing: ObserverAdded is appended with each binding's finding, never the credential", async () => {
  const ws = await workspace("git+file:///srv/repos/repo.git", "git+file:///srv/repos/docs.git");
  const asked = allowing.checks.length;
  const res = await addObserver({
    workspaceId: ws,
    credentials: { REPO: REPO_CREDENTIAL, DOCS: DOCS_CREDENTIAL },
  });
  assert.deepEqual(res.checks, {
    DOCS: "B: their credentials can read git+file:///srv/repos/docs.git",
    REPO: "B: their credentials can read git+file:///srv/repos/repo.git",
  });
  const got = allowing.checks.slice(asked).sort((a, b) => a.url.localeCompare(b.url));
  assert.deepEqual(got, [
    {
      url: "git+file:///srv/repos/docs.git",
      observer: "user:alice",
      credential: DOCS_CREDENTIAL,
      workspaceId: ws,
      binding: "DOCS",
    },
    {
      url: "git+file:///srv/repos/repo.git",
      observer: "user:alice",
      credential: REPO_CREDENTIAL,
      workspaceId: ws,
      binding: "REPO",
    },
  ]);
  const [last] = await store.readStream(`workspace-${ws}`, { direction: "backwards", maxCount: 1 });
  assert.equal(last?.type, "ObserverAdded");
  assert.deepEqual(ObserverAdded.fromJSON(last!.data), {
    observer: "user:alice",
    checks: res.checks,
    addedBy: "user:bob",
  });
  assert.equal(last!.metadata.actor, "user:bob");
  const stream = JSON.stringify(await store.readStream(`workspace-${ws}`));
  assert.ok(!stream.includes("ghp_"), "no credential in the stream");
});

test("the real MCP gatekeeper refuses (strategy A): PERMISSION_DENIED naming MEMORY and its reason, nothing appended", async () => {
  const ws = await workspace("git+file:///srv/repos/repo.git", "mcp://memory");
  const revision = await revisionOf(ws);
  await assert.rejects(
    addObserver({ workspaceId: ws, credentials: { REPO: REPO_CREDENTIAL, MEMORY: MEMORY_CREDENTIAL } }),
    (e: ServiceError) => {
      assert.equal(e.code, status.PERMISSION_DENIED);
      assert.match(
        e.details,
        new RegExp(
          `^user:alice may not observe workspace ${ws}: binding MEMORY: A: MCP bindings are private to the workspace; mcp://memory `,
        ),
      );
      assert.doesNotMatch(e.details, /binding REPO/, "only the refusing binding is named");
      assert.ok(!e.details.includes(MEMORY_CREDENTIAL));
      return true;
    },
  );
  assert.equal(await revisionOf(ws), revision, "nothing appended");
});

test("a binding without a credential is INVALID_ARGUMENT naming it, before any gatekeeper is asked", async () => {
  const ws = await workspace("git+file:///srv/repos/repo.git", "mcp://memory");
  const revision = await revisionOf(ws);
  const asked = allowing.checks.length;
  await assert.rejects(
    addObserver({ workspaceId: ws, credentials: { REPO: REPO_CREDENTIAL } }),
    (e: ServiceError) => {
      assert.equal(e.code, status.INVALID_ARGUMENT);
      assert.match(e.details, /^credentials has no entry for binding\(s\) MEMORY; /);
      return true;
    },
  );
  await assert.rejects(
    addObserver({
      workspaceId: ws,
      credentials: { REPO: REPO_CREDENTIAL, MEMORY: "m-cred", SLACK: "s-cred" },
    }),
    (e: ServiceError) => {
      assert.equal(e.code, status.INVALID_ARGUMENT);
      assert.match(
        e.details,
        new RegExp(`^credentials name binding\\(s\\) SLACK that workspace ${ws} does not have`),
      );
      return true;
    },
  );
  assert.equal(allowing.checks.length, asked, "no gatekeeper was asked");
  assert.equal(await revisionOf(ws), revision, "nothing appended");
});

test("bad fields are INVALID_ARGUMENT naming the field; an unknown workspace is NOT_FOUND", async () => {
  const ws = await workspace();
  const cases: [Partial<AddObserverRequest>, RegExp][] = [
    [{ workspaceId: "" }, /^workspace_id is required/],
    [{ workspaceId: ws, observer: "alice" }, /^observer must be "user:<id>"/],
    [{ workspaceId: ws, addedBy: "" }, /^added_by must be "user:<id>"/],
    [
      { workspaceId: ws, credentials: { repo: "x" } },
      /^credentials has a key "repo" that is not a binding name/,
    ],
    [{ workspaceId: ws, credentials: { REPO: "" } }, /^credentials\[REPO\] is empty/],
  ];
  for (const [req, message] of cases) {
    await assert.rejects(addObserver(req), (e: ServiceError) => {
      assert.equal(e.code, status.INVALID_ARGUMENT, e.details);
      assert.match(e.details, message);
      return true;
    });
  }
  await assert.rejects(
    addObserver({ workspaceId: "wdoesnotexist" }),
    (e: ServiceError) => e.code === status.NOT_FOUND,
  );
  // A workspace without bindings has nothing to check.
  assert.deepEqual((await addObserver({ workspaceId: ws })).checks, {});
});

test("a gatekeeper error names the binding, never the credential, and appends nothing", async () => {
  const url = "git+file:///srv/repos/flaky.git";
  allowing.unavailable.add(url);
  const ws = await workspace(url);
  const revision = await revisionOf(ws);
  await assert.rejects(
    addObserver({ workspaceId: ws, credentials: { FLAKY: REPO_CREDENTIAL } }),
    (e: ServiceError) => {
      assert.equal(e.code, status.FAILED_PRECONDITION, "a gatekeeper's UNAVAILABLE is not the kernel's");
      assert.match(
        e.details,
        /binding FLAKY: the git gatekeeper could not check the observer: remote refused/,
      );
      assert.ok(!e.details.includes("ghp_"), e.details);
      return true;
    },
  );
  assert.equal(await revisionOf(ws), revision);
});

test("a reason quoting the credential is redacted before it is stored or returned", async () => {
  const url = "git+file:///srv/repos/echo.git";
  allowing.echoing.add(url);
  const ws = await workspace(url);
  const res = await addObserver({ workspaceId: ws, credentials: { ECHO: REPO_CREDENTIAL } });
  assert.equal(res.checks.ECHO, `B: [credential] can read ${url}`);
  assert.ok(!JSON.stringify(await store.readStream(`workspace-${ws}`)).includes("ghp_"));
});

test("a binding introduced while the checks run is caught by the expected revision: nothing appended", async () => {
  const ws = await workspace("git+file:///srv/repos/repo.git");
  let introduced = false;
  allowing.hold = async () => {
    if (introduced) return;
    introduced = true;
    await unary(client.introduceResource, {
      workspaceId: ws,
      url: "git+file:///srv/repos/late.git",
      name: "",
    });
  };
  try {
    const revision = await revisionOf(ws);
    await assert.rejects(
      addObserver({ workspaceId: ws, credentials: { REPO: REPO_CREDENTIAL } }),
      (e: ServiceError) => {
        assert.equal(e.code, status.INVALID_ARGUMENT);
        assert.match(e.details, /^credentials has no entry for binding\(s\) LATE; /);
        return true;
      },
    );
    assert.equal(await revisionOf(ws), revision + 1, "only the ResourceIntroduced of LATE was appended");
    // With a credential for the new binding too, REPO is checked again only because it is a new call.
    const asked = allowing.checks.length;
    const res = await addObserver({
      workspaceId: ws,
      credentials: { REPO: REPO_CREDENTIAL, LATE: DOCS_CREDENTIAL },
    });
    assert.deepEqual(Object.keys(res.checks).sort(), ["LATE", "REPO"]);
    assert.equal(allowing.checks.length, asked + 2);
  } finally {
    allowing.hold = async () => {};
  }
});

test("credentials never reach the kernel's or the MCP gatekeeper's logs", () => {
  assert.ok(
    kernelLog.some((l) => l.includes('"observer.added"')),
    "the kernel logged the additions",
  );
  assert.ok(
    kernelLog.some((l) => l.includes('"observer.denied"')),
    "and the refusal",
  );
  const all = kernelLog.join("") + mcpOutput;
  for (const c of [REPO_CREDENTIAL, MEMORY_CREDENTIAL, DOCS_CREDENTIAL, "ghp_"]) {
    assert.ok(!all.includes(c), `${c} absent from the logs`);
  }
});
