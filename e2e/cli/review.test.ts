/**
 * `gatehouse review` against a real dev stack (real memory MCP server): on a real terminal (a pty
 * made by util-linux `script`) a scripted approver walks one turn — the risky writes come first and
 * are held, holding an entity holds the relation that depends on it, one entity is rejected with
 * its dependent observation — and the rest is approved in one decision: exactly those are applied,
 * the others stay pending or are rejected, and every approval in the stream carries the digest of
 * the record shown. An approval bound to another action's digest is refused naming the action and
 * approves nothing; without a terminal the command refuses.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { submitReview } from "@gatehouse/cli/review";
import { type ActionRecord, ActionStatus } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { type Harness, returned, startHarness, unary } from "../support/harness.ts";

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

const env = () => ({
  ...process.env,
  GATEHOUSE_USER: "dev-approver",
  GATEHOUSE_KERNEL_ADDRESS: h.stack.addresses.kernel,
  GATEHOUSE_APPROVAL_ADDRESS: h.stack.addresses.approval,
});

/** The CLI on a pty: what it wrote so far, and `expect`/`send` to drive it like a person. */
interface Terminal {
  child: ChildProcess;
  out(): string;
  /** Waits until `pattern` appears after what earlier calls consumed; consumes up to its end. */
  expect(pattern: RegExp, what: string): Promise<void>;
  /** Types `text` and Enter. */
  send(text: string): void;
  exited: Promise<number | null>;
}

function onTerminal(args: string[]): Terminal {
  const quoted = [process.execPath, "--no-node-snapshot", "--import", "tsx", MAIN, ...args]
    .map((a) => `'${a}'`)
    .join(" ");
  const child = spawn("script", ["-qfec", `exec ${quoted}`, "/dev/null"], {
    cwd: ROOT,
    env: env(),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  let at = 0;
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return {
    child,
    out: () => out,
    async expect(pattern, what) {
      await waitUntil(
        what,
        () => {
          const m = pattern.exec(out.slice(at));
          if (m) {
            at += m.index + m[0].length;
            return true;
          }
          if (child.exitCode !== null) throw new Error(`exited ${child.exitCode} before ${what}: ${out}`);
          return false;
        },
        { timeoutMs: 60_000 },
      );
    },
    send(text) {
      child.stdin?.write(`${text}\r`);
    },
    exited,
  };
}

type Ev = { type: string; data: Record<string, unknown> };
const stream = async (ws: string) => (await h.stack.store.readStream(`workspace-${ws}`)) as unknown as Ev[];

async function records(ws: string): Promise<Map<number, ActionRecord>> {
  const res = await unary(h.decisions, h.decisions.listActions, { workspaceId: ws, pendingOnly: false });
  return new Map(res.actions.map((a) => [a.id, a]));
}

test("a scripted approver on a real terminal holds the risky writes and an entity with its relation, rejects one, approves the rest in one decision bound to the digests shown", async () => {
  const ws = await h.workspace("mcp://memory");
  const turn = await h.exec(
    ws,
    `export default async (env: any) => {
      const m = env.MEMORY;
      const alpha = await m.create_entities({ entities: [{ name: "Alpha", entityType: "t", observations: [] }] });
      const beta = await m.create_entities({ entities: [{ name: "Beta", entityType: "t", observations: [] }] });
      const rel = await m.create_relations({ relations: [{ from: "Alpha", to: "Beta", relationType: "knows" }] }, { dependsOn: [alpha.actionId, beta.actionId] });
      const drop = await m.add_observations({ observations: [{ entityName: "Alpha", contents: ["cleanup:\\nDROP TABLE customers;"] }] }, { dependsOn: [alpha.actionId] });
      const gamma = await m.create_entities({ entities: [{ name: "Gamma", entityType: "t", observations: [] }] });
      const del = await m.delete_entities({ entityNames: ["Old Contractor"] });
      const delta = await m.create_entities({ entities: [{ name: "Delta", entityType: "t", observations: [] }] });
      const obs = await m.add_observations({ observations: [{ entityName: "Delta", contents: ["d"] }] }, { dependsOn: [delta.actionId] });
      return { alpha: alpha.actionId, beta: beta.actionId, rel: rel.actionId, drop: drop.actionId, gamma: gamma.actionId, del: del.actionId, delta: delta.actionId, obs: obs.actionId };
    }`,
  );
  const id = returned<Record<string, number>>(turn);
  assert.ok(turn.executionId, "the kernel names the execution");
  // Another execution's write in the same workspace: --turn leaves it out.
  const other = returned<number>(
    await h.exec(
      ws,
      `export default async (env: any) => (await env.MEMORY.create_entities({ entities: [{ name: "Elsewhere", entityType: "t", observations: [] }] })).actionId;`,
    ),
  );
  const was = await records(ws);
  assert.ok(was.get(id.drop!)?.description?.risks.length, "the DROP TABLE observation is flagged");
  assert.ok(was.get(id.del!)?.description?.risks.length, "the delete is flagged");

  const t = onTerminal(["review", ws, "--turn", turn.executionId]);
  await t.expect(/8 pending action\(s\) in .* 2 with risks \(shown first\)/, "the count");
  // Risky first, in submission order: the DROP TABLE observation, then the delete.
  await t.expect(
    new RegExp(`#${id.drop} [^\\n]*\\n[\\s\\S]*?RISK content[\\s\\S]*?Approve #${id.drop} \\[`),
    "the DROP",
  );
  t.send("d");
  await t.expect(/DROP TABLE customers[\s\S]*?Approve #\d+ \[/, "the whole text on d");
  t.send("n");
  await t.expect(new RegExp(`RISK destructive[\\s\\S]*?Approve #${id.del} \\[`), "the delete");
  t.send("n");
  await t.expect(new RegExp(`Approve #${id.alpha} \\[`), "Alpha");
  t.send("n");
  await t.expect(new RegExp(`held with it: #${id.rel}\\b`), "the relation held with Alpha");
  await t.expect(new RegExp(`Approve #${id.beta} \\[`), "Beta");
  t.send("y");
  await t.expect(new RegExp(`Approve #${id.gamma} \\[`), "Gamma (the relation is not asked about)");
  t.send("?");
  await t.expect(/n - hold it[\s\S]*?Approve #\d+ \[/, "the help");
  t.send("y");
  await t.expect(new RegExp(`Approve #${id.delta} \\[`), "Delta");
  t.send("r");
  await t.expect(/Reason for rejecting/, "the reason prompt");
  t.send("not needed");
  await t.expect(
    new RegExp(`rejects its dependents too: #${id.obs}\\b`),
    "the observation rejected with Delta",
  );
  await t.expect(/2 approve, 4 hold, 1 reject \(\+1 rejected with a rejected dependency/, "the summary");
  assert.equal(await t.exited, 0, t.out());
  assert.doesNotMatch(
    t.out(),
    new RegExp(`Approve #${id.rel} \\[|Approve #${id.obs} \\[|Approve #${other} \\[`),
  );

  const now = await records(ws);
  const state = (k: string) => now.get(id[k]!)?.status;
  for (const k of ["beta", "gamma"]) assert.equal(state(k), ActionStatus.ACTION_STATUS_APPLIED, k);
  for (const k of ["drop", "del", "alpha", "rel"])
    assert.equal(state(k), ActionStatus.ACTION_STATUS_PENDING, k);
  for (const k of ["delta", "obs"]) assert.equal(state(k), ActionStatus.ACTION_STATUS_REJECTED, k);
  assert.equal(now.get(id.delta!)?.reason, "not needed");
  assert.equal(now.get(other)?.status, ActionStatus.ACTION_STATUS_PENDING, "the other execution's write");

  // One decision: both approvals in one append, each with the digest of the record shown.
  const approvals = (await stream(ws)).filter((e) => e.type === "ActionApproved");
  assert.deepEqual(
    approvals.map((e) => [Number(e.data.actionId), e.data.descriptionDigest, e.data.decidedBy]),
    [id.beta, id.gamma].map((a) => [a, was.get(a!)?.descriptionDigest, "user:dev-approver"]),
  );
  assert.ok(was.get(id.beta!)?.descriptionDigest, "records carry a digest");
});

test("an approval bound to another action's digest is refused naming the action, and nothing in the batch is approved", async () => {
  const ws = await h.workspace("mcp://memory");
  const [a, b] = returned<number[]>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const a = await env.MEMORY.create_entities({ entities: [{ name: "S1", entityType: "t", observations: [] }] });
        const b = await env.MEMORY.create_entities({ entities: [{ name: "S2", entityType: "t", observations: [] }] });
        return [a.actionId, b.actionId];
      }`,
    ),
  ) as [number, number];
  const shown = await records(ws);
  const outcome = await submitReview({
    decisions: h.decisions,
    workspaceId: ws,
    plan: {
      approve: [a, b],
      // b's entry is a's digest: what the person saw is not b's description.
      descriptionDigests: { [a]: shown.get(a)!.descriptionDigest, [b]: shown.get(a)!.descriptionDigest },
      reject: [],
      hold: [],
      rejectedWith: [],
    },
    decidedBy: "user:dev-approver",
    stallMs: 30_000,
    json: true,
  });
  assert.ok("refused" in outcome, "refused");
  assert.match(outcome.refused, new RegExp(`action ${b}\\b.*not the digest of its description`));
  const now = await records(ws);
  for (const x of [a, b]) assert.equal(now.get(x)?.status, ActionStatus.ACTION_STATUS_PENDING);
  assert.equal((await stream(ws)).filter((e) => e.type === "ActionApproved").length, 0);
});

test("without a terminal, review refuses and points at approve/reject", async () => {
  const res = await run(process.execPath, ["--no-node-snapshot", "--import", "tsx", MAIN, "review", "ws"], {
    cwd: ROOT,
    env: env(),
  }).then(
    () => assert.fail("expected a refusal"),
    (err: { code: number; stderr: string }) => err,
  );
  assert.equal(res.code, 1);
  assert.match(res.stderr, /stdin is not one; from a script, decide with `gatehouse approve`/);
});

test("`a` approves this action and the rest, listing each with its summary; the held risky one stays pending", async () => {
  const ws = await h.workspace("mcp://memory");
  const id = returned<Record<string, number>>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const m = env.MEMORY;
        const one = await m.create_entities({ entities: [{ name: "One", entityType: "t", observations: [] }] });
        const del = await m.delete_entities({ entityNames: ["Gone"] });
        const two = await m.create_entities({ entities: [{ name: "Two", entityType: "t", observations: [] }] });
        const rel = await m.create_relations({ relations: [{ from: "One", to: "Two", relationType: "r" }] }, { dependsOn: [one.actionId, two.actionId] });
        return { one: one.actionId, del: del.actionId, two: two.actionId, rel: rel.actionId };
      }`,
    ),
  );
  const t = onTerminal(["review", ws]);
  await t.expect(new RegExp(`RISK destructive[\\s\\S]*?Approve #${id.del} \\[`), "the delete first");
  t.send("n");
  await t.expect(new RegExp(`Approve #${id.one} \\[`), "One");
  t.send("a");
  await t.expect(new RegExp(`also approving #${id.two} create_entities Two`), "Two listed");
  await t.expect(new RegExp(`also approving #${id.rel} create_relations`), "the relation listed");
  await t.expect(/3 approve, 1 hold, 0 reject/, "the summary");
  assert.equal(await t.exited, 0, t.out());
  const now = await records(ws);
  for (const k of ["one", "two", "rel"]) {
    assert.equal(now.get(id[k]!)?.status, ActionStatus.ACTION_STATUS_APPLIED, k);
  }
  assert.equal(now.get(id.del!)?.status, ActionStatus.ACTION_STATUS_PENDING);
});

test("Ctrl-C in the middle of a review submits nothing", async () => {
  const ws = await h.workspace("mcp://memory");
  const [a, b] = returned<number[]>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const a = await env.MEMORY.create_entities({ entities: [{ name: "C1", entityType: "t", observations: [] }] });
        const b = await env.MEMORY.create_entities({ entities: [{ name: "C2", entityType: "t", observations: [] }] });
        return [a.actionId, b.actionId];
      }`,
    ),
  ) as [number, number];
  const t = onTerminal(["review", ws]);
  await t.expect(new RegExp(`Approve #${a} \\[`), "the first prompt");
  t.send("y");
  await t.expect(new RegExp(`Approve #${b} \\[`), "the second prompt");
  t.child.stdin?.write("\u0003");
  assert.equal(await t.exited, 130, t.out());
  assert.match(t.out(), /interrupted; nothing was submitted \(every action is still pending\)/);
  const now = await records(ws);
  for (const x of [a, b]) assert.equal(now.get(x)?.status, ActionStatus.ACTION_STATUS_PENDING);
});
