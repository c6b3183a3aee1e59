/**
 * The CLI through the gateway alone (GATEHOUSE_GATEWAY_URL + GATEHOUSE_TOKEN), against a real
 * `gatehouse dev` stack whose gRPC addresses the CLI is not given: create a workspace, connect the
 * memory MCP server, run a snippet that reads and writes (the write held for approval), approve every
 * pending action (`--all`, followed until applied), verify the log — and a command the gateway does
 * not serve is refused naming the ones it does, as are a non-admin's connect and a missing token.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { type DevStack, startDevStack } from "@gatehouse/dev-stack";
import pino from "pino";

const MAIN = join(import.meta.dirname, "../../apps/cli/src/main.ts");
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "gatehouse-gateway-cli-"));
let stack: DevStack;
let env: NodeJS.ProcessEnv;

before(async () => {
  stack = await startDevStack({ dataDir: dir, logger: pino({ level: "fatal" }) });
  const admin = stack.devTokens.find((t) => t.subject === "dev-admin")!.token;
  // No GATEHOUSE_KERNEL_ADDRESS / _APPROVAL_ADDRESS, and a data dir without dev.json: only the gateway.
  env = {
    GATEHOUSE_GATEWAY_URL: stack.addresses.gateway,
    GATEHOUSE_TOKEN: admin,
    GATEHOUSE_DATA_DIR: join(dir, "elsewhere"),
  };
});

after(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI from source; never throws (exit code in `code`). */
async function gatehouse(
  args: string[],
  extra: NodeJS.ProcessEnv = {},
): Promise<{ stdout: string; stderr: string; code: number }> {
  const childEnv = { ...process.env, ...env, ...extra };
  delete childEnv.GATEHOUSE_KERNEL_ADDRESS;
  delete childEnv.GATEHOUSE_APPROVAL_ADDRESS;
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ["--no-node-snapshot", "--import", "tsx", MAIN, ...args],
      { env: childEnv, timeout: 180_000 },
    );
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

test("through the gateway: workspace create, connect mcp://memory, exec (a read and a write), approve, verify", async () => {
  const created = await gatehouse(["workspace", "create", "--name", "through-gateway"]);
  assert.equal(created.code, 0, created.stderr);
  const ws = created.stdout.trim();
  assert.match(ws, /\S/);

  const connected = await gatehouse(["connect", ws, "mcp://memory"]);
  assert.equal(connected.code, 0, connected.stderr);
  assert.match(connected.stdout, /^MEMORY\t/);

  const snippet = join(dir, "snippet.ts");
  writeFileSync(
    snippet,
    `export default async (env) => {
  const graph = await env.MEMORY.read_graph({});
  await env.MEMORY.create_entities({ entities: [{ name: "Gateway", entityType: "test", observations: ["through the CLI"] }] });
  return { read: typeof graph };
};
`,
  );
  const exec = await gatehouse(["exec", ws, snippet, "--json"]);
  assert.equal(exec.code, 0, exec.stderr + exec.stdout);
  const result = JSON.parse(exec.stdout) as {
    ok: boolean;
    observed: unknown[];
    submitted: { actionId: number }[];
  };
  assert.ok(result.ok, exec.stdout);
  assert.equal(result.observed.length, 1, "the read is recorded");
  assert.equal(result.submitted.length, 1, "the write is held for approval");
  const id = result.submitted[0]!.actionId;

  const approved = await gatehouse(["approve", ws, "--all"]);
  assert.equal(approved.code, 0, approved.stderr);
  assert.match(approved.stdout, new RegExp(`^#${id}\\tapplied\\tMEMORY\\t`));

  const verified = await gatehouse(["verify", ws]);
  assert.equal(verified.code, 0, verified.stderr);
  assert.match(verified.stdout, /^ok: \d+ events? .*hash chain intact/);
});

test("a command the gateway does not serve is refused naming the ones it does; connect needs an admin; a missing token is named", async () => {
  const log = await gatehouse(["log", "w1"]);
  assert.equal(log.code, 1);
  assert.match(
    log.stderr,
    /`gatehouse log` talks to the services' gRPC.*workspace create, connect, exec, approve, verify/,
  );

  const ws = (await gatehouse(["workspace", "create", "--member", "user:dev-approver"])).stdout.trim();
  const approver = stack.devTokens.find((t) => t.subject === "dev-approver")!.token;
  const denied = await gatehouse(["connect", ws, "mcp://memory"], { GATEHOUSE_TOKEN: approver });
  assert.equal(denied.code, 1);
  assert.match(denied.stderr, /HTTP 403: .*connecting a resource needs the admin role/);

  const noToken = await gatehouse(["verify", ws], { GATEHOUSE_TOKEN: "" });
  assert.equal(noToken.code, 1);
  assert.match(noToken.stderr, /GATEHOUSE_GATEWAY_URL is set but GATEHOUSE_TOKEN is not/);
});
