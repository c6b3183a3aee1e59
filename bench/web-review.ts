/**
 * `npm run bench:web-review`: issue 32's review figures in Chromium (playwright-core) on `gatehouse dev`'s
 * stack with the real MCP memory and filesystem servers.
 *   - The issue's agent turn staged in one execution: 12 create_entities and 12 create_relations
 *     (memory server; three relations depend on one entity, "Hub Contractor"), 10 Markdown
 *     write_file (filesystem server; one has the line `DROP TABLE customers;` at about character
 *     330), 2 delete_entities and 1 edit_file. The issue calls it "40 writes"; its parts add to 37
 *     (its own "0 of 36" progress after holding one agrees), and this is those 37.
 *   - Screens to review it at 1280x800 and 390x844: the review page's scroll height over the
 *     viewport height, rounded up, after checking that every write's summary (its key arguments) is
 *     rendered and visible on the page, no detail page opened. Baseline, same run: the old way —
 *     the inbox's screens plus every action's detail page's screens (rounded up each).
 *   - Interactions (clicks + key presses) of a scripted approver that holds the 3 risky writes (the
 *     2 deletes, the DROP TABLE file) and the entity the relations depend on (choosing "also hold
 *     its dependents") and approves the rest in one decision; the batch must name exactly the rest,
 *     they must be applied, the held ones stay pending, and the servers' state must agree.
 * Prints a table and writes bench-results/web-review.json (full-page screenshots of the review page
 * go to e2e/test-output/screenshots/bench-review-*.png). The 5,000-pending first load of the
 * review page is in `npm run bench:web-load`.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startDevStack } from "@gatehouse/dev-stack";
import { launchBrowser, SCREENSHOTS } from "@gatehouse/e2e/support/browser";
import { api } from "@gatehouse/e2e/support/gateway-client";
import type { Action, ActionDetail } from "@gatehouse/gateway-contract";
import { KernelClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import type { Browser, Locator, Page } from "playwright-core";
import { envSandbox, gitCommit, log, printTable, type Row, returned, runBench, unary } from "./support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const SANDBOX = envSandbox();
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const HUB = "Hub Contractor";
const ENTITIES = [
  HUB,
  "Ledger Team",
  "Billing Service",
  "Customer Database",
  "Payments Gateway",
  "Invoice Archive",
  "Audit Office",
  "Support Desk",
  "Data Warehouse",
  "Release Train",
  "Security Review",
  "Finance Lead",
];
/** 12 relations; the first three depend on the hub entity, the rest on other pairs. */
const RELATIONS: [string, string, string][] = [
  [HUB, "Ledger Team", "maintains"],
  [HUB, "Billing Service", "operates"],
  [HUB, "Customer Database", "administers"],
  ["Ledger Team", "Billing Service", "feeds"],
  ["Billing Service", "Payments Gateway", "calls"],
  ["Payments Gateway", "Invoice Archive", "stores in"],
  ["Audit Office", "Invoice Archive", "audits"],
  ["Support Desk", "Customer Database", "reads"],
  ["Data Warehouse", "Customer Database", "copies"],
  ["Release Train", "Billing Service", "ships"],
  ["Security Review", "Payments Gateway", "reviews"],
  ["Finance Lead", "Ledger Team", "leads"],
];
const DELETES = ["Old Contractor", "Legacy Vendor"];

/** The Markdown of file `i` (the sixth holds `DROP TABLE customers;` at about character 330). */
function markdown(i: number): string {
  const intro =
    `# Runbook ${i + 1}\n\nThis page describes how the ledger team handles step ${i + 1} of the quarterly close. ` +
    "It lists who is on call, which dashboards to watch and what to do when a reconciliation fails.\n\n" +
    "## Steps\n\n1. Freeze the billing exports.\n2. Reconcile the invoice archive against the ledger.\n";
  if (i !== 5) return `${intro}3. Unfreeze the exports and post in the channel.\n`;
  return `${intro}3. Clean up staging:\n\n\`\`\`sql\n-- one-off\nDROP TABLE customers;\n\`\`\`\n4. Unfreeze the exports.\n`;
}

interface Staged {
  entities: Record<string, number>;
  relations: number[];
  files: number[];
  deletes: number[];
  edit: number;
}

const rowSel = (id: number) => `[data-review-row="${id}"]`;

/** Screens a page takes: its scroll height over the viewport's height, rounded up. */
const screensOf = async (page: Page) => Math.ceil(await exactScreens(page));
/** The scroll height over the viewport's height, unrounded. */
const exactScreens = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollHeight / window.innerHeight);

async function openAt(
  browser: Browser,
  base: string,
  token: string,
  viewport: typeof DESKTOP,
  route: string,
) {
  const context = await browser.newContext({ viewport });
  await context.addInitScript((t) => window.sessionStorage.setItem("gatehouse.token", t), token);
  const page = await context.newPage();
  await page.goto(`${base}/#${route}`);
  return page;
}

/**
 * Which of `actions` have their summary rendered and visible (not hidden, not inside a closed
 * `<details>`) in their review row; returns the ids that do not.
 */
async function summariesMissing(page: Page, actions: Action[]): Promise<number[]> {
  return page.evaluate(
    (list) =>
      list
        .filter(({ id, summary }) => {
          const el = document.querySelector(`[data-review-row="${id}"] .review-summary`);
          if (!el || !(el.textContent ?? "").includes(summary)) return true;
          const r = el.getBoundingClientRect();
          return !el.checkVisibility() || r.width === 0 || r.height === 0;
        })
        .map(({ id }) => id),
    actions.map((a) => ({ id: a.id, summary: a.summary })),
  );
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), "gatehouse-bench-web-review-"));
  const stack = await startDevStack({ dataDir: work, sandbox: SANDBOX });
  const kernel = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
  const browser = await launchBrowser();
  const token = stack.devTokens.find((t) => t.subject === "dev-approver")?.token ?? "";
  const base = stack.addresses.gateway;
  const load = [...loadavg()];
  const rows: Row[] = [];
  try {
    const ws = (
      await unary(kernel, kernel.createWorkspace, {
        name: "bench-review",
        owner: "user:dev-approver",
        members: [],
      })
    ).id;
    for (const url of ["mcp://memory", "mcp://files"])
      await unary(kernel, kernel.introduceResource, { workspaceId: ws, url, name: "" });
    // The turn's files go to an existing docs/ directory; the edited README is already there.
    const docs = join(work, "files", "docs");
    mkdirSync(docs, { recursive: true });
    const readme = join(docs, "README.md");
    writeFileSync(readme, "# Docs\n\nOwner: Old Contractor\n");
    const filePaths = Array.from({ length: 10 }, (_, i) => join(docs, `runbook-${i + 1}.md`));
    const dropFile = 5;
    const dropAt = markdown(dropFile).indexOf("DROP TABLE");
    assert.ok(dropAt >= 310 && dropAt <= 350, `the DROP TABLE line is around character 330 (${dropAt})`);

    log("staging the turn in one execution");
    const result = await unary(kernel, kernel.executeCode, {
      workspaceId: ws,
      code: `export default async (env: any) => {
        const entities: Record<string, number> = {};
        for (const name of ${JSON.stringify(ENTITIES)})
          entities[name] = (await env.MEMORY.create_entities({ entities: [{ name, entityType: "org", observations: ["part of the quarterly close"] }] })).actionId;
        const relations: number[] = [];
        for (const [from, to, relationType] of ${JSON.stringify(RELATIONS)})
          relations.push((await env.MEMORY.create_relations({ relations: [{ from, to, relationType }] }, { dependsOn: [entities[from], entities[to]] })).actionId);
        const files: number[] = [];
        const contents = ${JSON.stringify(filePaths.map((p, i) => [p, markdown(i)]))};
        for (const [path, content] of contents) files.push((await env.FILES.write_file({ path, content })).actionId);
        const deletes: number[] = [];
        for (const name of ${JSON.stringify(DELETES)}) deletes.push((await env.MEMORY.delete_entities({ entityNames: [name] })).actionId);
        const edit = (await env.FILES.edit_file({ path: ${JSON.stringify(readme)}, edits: [{ oldText: "Owner: Old Contractor", newText: "Owner: Ledger Team" }] })).actionId;
        return { entities, relations, files, deletes, edit };
      }`,
      caller: { kind: "agent", id: "bench" },
      limits: { wallTimeMs: 120_000, heapMb: 0, outputBytes: 0 },
      executionId: "",
    });
    const staged = returned(result) as Staged;
    const all = [
      ...Object.values(staged.entities),
      ...staged.relations,
      ...staged.files,
      ...staged.deletes,
      staged.edit,
    ];
    assert.equal(all.length, 37);
    const detail = async (id: number) => {
      const r = await api<ActionDetail>(base, token, "GET", `/api/workspaces/${ws}/actions/${id}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.action;
    };
    const actions = await Promise.all(all.map(detail));
    const route = `/ws/${ws}/review?execution=${encodeURIComponent(result.executionId)}`;
    const pinned: Record<string, number> = {};

    // 1. Screens on the review page, and every summary visible without a detail page.
    const review: Record<string, number> = {};
    const exact: Record<string, number> = {};
    const missing: Record<string, number[]> = {};
    for (const [name, viewport] of [
      ["1280x800", DESKTOP],
      ["390x844", PHONE],
    ] as const) {
      const page = await openAt(browser, base, token, viewport, route);
      await page.waitForFunction(
        (n) => document.querySelectorAll("[data-review-row]").length >= n,
        all.length,
        {
          timeout: 60_000,
        },
      );
      const ratio = await exactScreens(page);
      exact[name] = Math.round(ratio * 100) / 100;
      review[name] = Math.ceil(ratio);
      await page.screenshot({ path: join(SCREENSHOTS, `bench-review-${name}.png`), fullPage: true });
      missing[name] = await summariesMissing(page, actions);
      pinned[name] = await page.locator('[data-testid="review-risky"] [data-review-row]').count();
      await page.context().close();
    }

    // Baseline, the old way: the inbox, then every action's detail page.
    const oldWay: Record<string, number> = {};
    for (const [name, viewport] of [
      ["1280x800", DESKTOP],
      ["390x844", PHONE],
    ] as const) {
      const page = await openAt(browser, base, token, viewport, "/");
      await page.waitForFunction(
        (n) => document.querySelector('[data-testid="pending-count"]')?.textContent === String(n),
        all.length,
        { timeout: 60_000 },
      );
      let screens = await screensOf(page);
      for (const id of all) {
        await page.evaluate((r) => {
          window.location.hash = `#${r}`;
        }, `/ws/${ws}/actions/${id}`);
        await page.waitForFunction(
          (i) =>
            document.querySelector("main.detail h1 .row-id")?.textContent === `#${i}` &&
            document.querySelector('[data-testid="description"]') !== null,
          id,
          { timeout: 30_000 },
        );
        screens += await screensOf(page);
      }
      oldWay[name] = screens;
      await page.context().close();
    }
    for (const [name, goal, issue] of [
      ["1280x800", 3, "≈ 60"],
      ["390x844", 8, "≈ 85"],
    ] as const) {
      const value = review[name] ?? Number.NaN;
      rows.push({
        id: `web.review_screens_${name}`,
        measurement: `screens to review the issue's turn (37 writes) at ${name}, review page`,
        value,
        baseline: `inbox + every detail page, same run (issue: ${issue})`,
        baselineValue: oldWay[name] ?? Number.NaN,
        unit: "screens",
        ratio: value / (oldWay[name] ?? Number.NaN),
        goal: `≤ ${goal}`,
        note:
          (missing[name] ?? []).length === 0
            ? `${exact[name]} screens unrounded; every write's summary visible on the page`
            : `summary not visible for #${(missing[name] ?? []).join(", #")}`,
      });
    }

    // 2. The scripted approver: hold the 3 risky writes and the hub entity with its dependents.
    const risky = [...staged.deletes, staged.files[dropFile] as number];
    const hub = staged.entities[HUB] as number;
    const hubDependents = staged.relations.slice(0, 3);
    const held = [...risky, hub, ...hubDependents];
    const included = all.filter((id) => !held.includes(id));
    let clicks = 0;
    const keys = 0;
    const click = async (target: Locator) => {
      await target.click();
      clicks++;
    };
    const page = await openAt(browser, base, token, DESKTOP, route);
    await page.waitForFunction(
      (n) => document.querySelectorAll("[data-review-row]").length >= n,
      all.length,
      {
        timeout: 60_000,
      },
    );
    for (const id of risky) await click(page.locator(`${rowSel(id)} input[type="checkbox"]`).first());
    await click(page.locator(`${rowSel(hub)} input[type="checkbox"]`).first());
    await click(
      page
        .locator(`${rowSel(hub)} [data-testid="hold-offer"]`)
        .getByRole("button", { name: "Also hold its dependents" }),
    );
    for (const id of held)
      assert.equal(await page.getAttribute(rowSel(id), "data-held"), "true", `#${id} is held on the page`);
    const sent = page.waitForRequest((r) => r.url().endsWith(`/api/workspaces/${ws}/approve-batch`));
    await click(page.locator('[data-testid="review-approve"]'));
    const body = (await sent).postDataJSON() as {
      actionIds: number[];
      descriptionDigests: Record<string, string>;
    };
    assert.deepEqual(
      [...body.actionIds].sort((a, b) => a - b),
      [...included].sort((a, b) => a - b),
      "one decision naming exactly the rest",
    );
    for (const id of included) assert.ok(body.descriptionDigests[String(id)], `#${id} carries its digest`);
    await page.waitForSelector(`[data-testid="review-status"]:has-text("Approved ${included.length}")`, {
      timeout: 60_000,
    });
    await page.context().close();
    log(`approved ${included.length} in ${clicks} clicks and ${keys} keys; waiting for the applies`);
    const end = Date.now() + 180_000;
    for (;;) {
      const statuses = await Promise.all(included.map(async (id) => (await detail(id)).status));
      if (statuses.every((s) => s === "applied")) break;
      if (statuses.some((s) => s === "failed"))
        throw new Error(`an included write failed: ${JSON.stringify(statuses)}`);
      if (Date.now() > end) throw new Error(`not all applied in time: ${JSON.stringify(statuses)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    for (const id of held) assert.equal((await detail(id)).status, "pending", `held #${id} stays pending`);
    const memory = readFileSync(join(work, "memory.jsonl"), "utf8");
    assert.ok(memory.includes('"Ledger Team"'), "an included entity is in the memory server's state");
    assert.equal(memory.includes(`"${HUB}"`), false, "the held hub entity is not");
    filePaths.forEach((p, i) => {
      assert.equal(existsSync(p), i !== dropFile, `${p} written only when included`);
    });
    assert.match(readFileSync(readme, "utf8"), /Owner: Ledger Team/, "the edit was applied");

    rows.push({
      id: "web.review_hold_interactions",
      measurement: `interactions to hold 3 risky + 1 entity (with its 3 dependents), approve ${included.length} in one decision`,
      value: clicks + keys,
      baseline: `one approve per write in the inbox (${included.length}, counted)`,
      baselineValue: included.length,
      unit: "clicks+keys",
      ratio: (clicks + keys) / included.length,
      goal: "≤ 10",
      note: `${clicks} clicks, ${keys} keys; exactly the ${included.length} included applied, ${held.length} held pending`,
    });

    printTable(rows);
    for (const r of rows) if (r.note) console.log(`${r.id}: ${r.note}`);
    console.log(
      `pinned as risky on the page: ${pinned["1280x800"]} of 37 (the issue's 3 risky writes: 2 deletes, the DROP TABLE file)`,
    );
    console.log(`${cpus().length} CPUs; load average at start ${load.map((x) => x.toFixed(2)).join(" ")}`);
    const out = join(ROOT, "bench-results");
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, "web-review.json"),
      `${JSON.stringify(
        {
          at: new Date().toISOString(),
          commit: gitCommit(ROOT),
          rows,
          review,
          exact,
          oldWay,
          missing,
          pinned,
          clicks,
          keys,
          loadavg: load,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await browser.close();
    kernel.close();
    await stack.close();
    rmSync(work, { recursive: true, force: true });
  }
}

runBench(main);
