/**
 * Clients we did not write, against the gateway's MCP endpoint over the real stack: the MCP
 * inspector in CLI mode (`@modelcontextprotocol/inspector-cli`, run as its own process) and the Python
 * MCP SDK's client (PyPI `mcp`, in the venv scripts/setup.sh makes), each listing the tools and
 * running execute_code; the read it makes is recorded in the workspace log.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { type Harness, startHarness } from "../support/harness.ts";
import { mcpUrl } from "../support/mcp-http-client.ts";

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const INSPECTOR = require.resolve("@modelcontextprotocol/inspector-cli/build/cli.js");
/** The venv scripts/setup.sh installs the Python MCP SDK into. */
const PYTHON = join(
  process.env.XDG_CACHE_HOME || join(homedir(), ".cache"),
  "gatehouse",
  "python-mcp",
  "bin",
  "python",
);
const READ = "export default async (env: any) => (await env.MEMORY.read_graph({})).content.length";

let h: Harness;
let token: string;
before(async () => {
  h = await startHarness();
  token = h.stack.devTokens.find((t) => t.subject === "dev-approver")?.token ?? "";
});
after(async () => {
  await h?.close();
});

const observations = async (ws: string) =>
  (await h.stack.store.readStream(`workspace-${ws}`)).filter((e) => e.type === "ObservationRecorded").length;

/** Runs the inspector's CLI mode against `url`; its stdout is the JSON answer. */
async function inspector(url: URL, ...method: string[]): Promise<unknown> {
  const { stdout } = await run(
    process.execPath,
    [
      INSPECTOR,
      "--cli",
      url.href,
      "--transport",
      "http",
      "--header",
      `Authorization: Bearer ${token}`,
      "--method",
      ...method,
    ],
    // inspector-cli 1.0.3 finds its package.json by a path relative to the working directory (and
    // imports it relative to its module): from its build folder both agree.
    { timeout: 120_000, cwd: dirname(INSPECTOR) },
  );
  return JSON.parse(stdout);
}

test("the MCP inspector's CLI mode lists the tools and runs execute_code over Streamable HTTP", async () => {
  const ws = await h.workspace("mcp://memory");
  const url = mcpUrl(h.stack.addresses.gateway, ws);
  const listed = (await inspector(url, "tools/list")) as { tools: Array<{ name: string }> };
  const names = listed.tools.map((t) => t.name);
  assert.ok(names.includes("execute_code") && names.includes("wait_for_decisions"), names.join(", "));
  const called = (await inspector(
    url,
    "tools/call",
    "--tool-name",
    "execute_code",
    "--tool-arg",
    `code=${READ}`,
  )) as {
    isError?: boolean;
    structuredContent?: { returnValue?: unknown };
  };
  assert.notEqual(called.isError, true, JSON.stringify(called));
  assert.equal(called.structuredContent?.returnValue, 1);
  assert.equal(await observations(ws), 1, "the read was recorded");
});

test("the Python MCP SDK's client (PyPI mcp) lists the tools and runs execute_code over Streamable HTTP", async () => {
  assert.ok(existsSync(PYTHON), `the Python MCP SDK is not installed at ${PYTHON}: run npm run setup`);
  const ws = await h.workspace("mcp://memory");
  const { stdout } = await run(
    PYTHON,
    [
      join(import.meta.dirname, "../support/mcp_http_client.py"),
      mcpUrl(h.stack.addresses.gateway, ws).href,
      token,
      READ,
    ],
    { timeout: 120_000 },
  );
  const out = JSON.parse(stdout) as {
    protocol: string;
    tools: string[];
    isError: boolean;
    text: string;
    structured: { returnValue?: unknown } | null;
  };
  assert.equal(out.protocol, "2025-11-25", "it fell back from its server/discover probe to initialize");
  assert.ok(
    out.tools.includes("execute_code") && out.tools.includes("wait_for_decisions"),
    out.tools.join(", "),
  );
  assert.equal(out.isError, false, out.text);
  assert.equal(out.structured?.returnValue, 1);
  assert.equal(await observations(ws), 1, "the read was recorded");
});
