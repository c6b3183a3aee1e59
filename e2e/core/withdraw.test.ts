/**
 * `gatehouse withdraw` against a real dev stack (real memory MCP server): an applied action's
 * approval cannot be withdrawn and the CLI says why, naming the action; a pending action has no
 * approval to withdraw. (An approved-not-yet-applied withdrawal is covered by the approval service's
 * own tests; here no worker pause is available to hold an approval before apply.)
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { type Harness, returned, startHarness } from "../support/harness.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const MAIN = join(ROOT, "apps/cli/src/main.ts");
const run = promisify(execFile);

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Runs the CLI against the harness's services as dev-approver; never throws on exit 1. */
async function gatehouse(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ["--no-node-snapshot", "--import", "tsx", MAIN, ...args],
      {
        cwd: ROOT,
        timeout: 120_000,
        env: {
          ...process.env,
          GATEHOUSE_USER: "dev-approver",
          GATEHOUSE_KERNEL_ADDRESS: h.stack.addresses.kernel,
          GATEHOUSE_APPROVAL_ADDRESS: h.stack.addresses.approval,
        },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

test("withdrawing an applied action's approval is refused saying it is applied; a pending one has no approval to withdraw", async () => {
  const ws = await h.workspace("mcp://memory");
  const [root, leaf] = returned<number[]>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const root = await env.MEMORY.create_entities({ entities: [{ name: "Wd", entityType: "t", observations: [] }] });
        const leaf = await env.MEMORY.add_observations({ observations: [{ entityName: "Wd", contents: ["x"] }] }, { dependsOn: [root.actionId] });
        return [root.actionId, leaf.actionId];
      }`,
    ),
  ) as [number, number];
  // Two ids make it a batch, which the CLI follows until each action is final (applied here).
  const approved = await gatehouse(["approve", ws, String(root), String(root)]);
  assert.equal(approved.code, 0, approved.stderr);

  const applied = await gatehouse(["withdraw", ws, String(root), "--reason", "changed my mind"]);
  assert.equal(applied.code, 1, applied.stdout);
  assert.match(applied.stderr, new RegExp(`${root}`));
  assert.match(applied.stderr, /applied|only an approval not yet claimed for apply can be withdrawn/);

  const pending = await gatehouse(["withdraw", ws, String(leaf)]);
  assert.equal(pending.code, 1, pending.stdout);
  assert.match(pending.stderr, /is pending \(not approved\); there is no approval to withdraw/);

  const still = await gatehouse(["--json", "actions", ws]);
  const states = JSON.parse(still.stdout) as { id: number; status: string }[];
  assert.equal(states.find((a) => a.id === leaf)?.status, "ACTION_STATUS_PENDING");
});
