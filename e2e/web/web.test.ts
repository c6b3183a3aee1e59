/**
 * Acceptance of the approver web app (issue 6): Debian's Chromium driven by playwright-core against
 * the stack `gatehouse dev` runs (approval, kernel, Temporal, the real MCP memory server from npm,
 * the gateway serving web/dist), with live notices through a real nats-server.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { DecisionResult } from "@gatehouse/gateway-contract";
import { type NatsServerProcess, startNatsServer } from "@gatehouse/live-notices/nats-server";
import { ActionSubmitted, Delivery } from "@gatehouse/proto";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, openApp, SCREENSHOTS, scrollsSideways } from "../support/browser.ts";
import { api } from "../support/gateway-client.ts";
import { type Harness, returned, startHarness, unary } from "../support/harness.ts";

let h: Harness;
let nats: NatsServerProcess;
let browser: Browser;
let base: string;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";
/** Action ids are per-workspace log ids, so a row is found by workspace and id. */
const row = (ws: string, id: number) =>
  `[data-testid="action-row"][data-workspace="${ws}"][data-action-id="${id}"]`;

before(async () => {
  const dist = join(import.meta.dirname, "../../web/dist/index.html");
  assert.ok(existsSync(dist), "web/dist is built (npm run build)");
  nats = await startNatsServer();
  h = await startHarness(undefined, { natsUrl: nats.url });
  base = h.stack.addresses.gateway;
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await h?.close();
  await nats?.close();
});

/** Submits one create_entities write per name; returns the action ids in submission order. */
async function createEntities(ws: string, names: string[]): Promise<number[]> {
  return returned<number[]>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const ids: number[] = [];
        for (const name of ${JSON.stringify(names)}) {
          const r = await env.MEMORY.create_entities({ entities: [{ name, entityType: "person", observations: [] }] });
          ids.push(r.actionId);
        }
        return ids;
      }`,
    ),
  );
}

/** Records in the page when each action row first shows as pending (epoch ms). */
async function watchRows(page: Page): Promise<void> {
  // A string, not a function: tsx would add helper calls (__name) the page does not have.
  await page.evaluate(`(() => {
    window.seen = {};
    const mark = () => {
      for (const el of document.querySelectorAll('[data-testid="action-row"][data-status="pending"]')) {
        const key = el.getAttribute("data-workspace") + "/" + el.getAttribute("data-action-id");
        if (window.seen[key] === undefined) window.seen[key] = Date.now();
      }
    };
    mark();
    new MutationObserver(mark).observe(document.body, { subtree: true, childList: true, attributes: true });
  })()`);
}

async function seenAt(page: Page, ws: string, id: number, timeoutMs: number): Promise<number> {
  await page.waitForSelector(row(ws, id), { timeout: timeoutMs });
  return page.evaluate(
    (key) => (window as unknown as { seen: Record<string, number> }).seen[key] ?? Date.now(),
    `${ws}/${id}`,
  );
}

async function submittedAt(ws: string, id: number): Promise<number> {
  const events = await h.stack.store.readStream(`workspace-${ws}`, { fromRevision: id, maxCount: 1 });
  assert.equal(events[0]?.type, "ActionSubmitted");
  return Date.parse(events[0]?.metadata.occurredAt ?? "");
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

describe("approver web app in Chromium", () => {
  test("a pending write appears in the open inbox within 1 s of SubmitAction, without reload (p50 over 50 submissions)", async (t) => {
    const ws = await h.workspace("mcp://memory");
    const page = await openApp(browser, base, tokenOf("dev-approver"));
    await watchRows(page);
    const latencies: number[] = [];
    for (let i = 0; i < 50; i++) {
      const [id] = await createEntities(ws, [`Live${i}`]);
      assert.ok(id);
      latencies.push((await seenAt(page, ws, id, 5000)) - (await submittedAt(ws, id)));
    }
    const p50 = percentile(latencies, 50);
    t.diagnostic(
      `SubmitAction → row visible: p50 ${p50} ms, p90 ${percentile(latencies, 90)} ms, max ${Math.max(...latencies)} ms over 50`,
    );
    assert.ok(p50 < 1000, `p50 ${p50} ms is under 1 s`);
    assert.ok(Math.max(...latencies) < 1000 * 2, "none took over 2 s");
    assert.equal(
      await page.evaluate(() => performance.getEntriesByType("navigation").length),
      1,
      "no reload",
    );
    await page.context().close();
  });

  test("approve from the detail page: the real memory server changes and the row moves to applied", async () => {
    const ws = await h.workspace("mcp://memory");
    // The chat h.exec stamps (agent:chat-1), as an MCP session would record it.
    await unary(h.kernel, h.kernel.startChat, {
      workspaceId: ws,
      chatId: "chat-1",
      startedBy: "user:dev-approver",
      surface: "mcp-http",
    });
    const [id] = await createEntities(ws, ["Dora"]);
    const page = await openApp(browser, base, tokenOf("dev-approver"), `/ws/${ws}/actions/${id}`);
    await page.waitForSelector('[data-testid="status"]:has-text("pending")');
    assert.equal(
      await page.textContent('[data-testid="caller"]'),
      "agent:chat-1 for dev-approver",
      "the detail names who started the agent's chat",
    );
    await page.click('[data-testid="approve"]');
    await page.waitForSelector('[data-testid="status"]:has-text("applied")', { timeout: 60_000 });
    assert.ok(
      h.memoryState().some((l) => l.includes('"Dora"')),
      "the memory server has Dora",
    );
    const result = (await page.textContent("pre.result")) ?? "";
    assert.match(result, /Dora/, "the result is shown");
    assert.doesNotMatch(result, /"type":\s*"text"/, "an MCP result shows its text, not the JSON envelope");
    await page.evaluate(() => {
      window.location.hash = "#/";
    });
    await page.waitForSelector(`${row(ws, id ?? 0)}[data-status="applied"]`, { timeout: 60_000 });
    await page.context().close();
  });

  test("select 20 pending actions and approve: all 20 apply, in submission order", async () => {
    const ws = await h.workspace("mcp://memory");
    const names = Array.from({ length: 20 }, (_, i) => `Batch${String(i).padStart(2, "0")}`);
    const ids = await createEntities(ws, names);
    const page = await openApp(browser, base, tokenOf("dev-approver"));
    for (const id of [...ids].reverse()) await page.click(`${row(ws, id)} [data-testid="select"]`);
    await page.click('[data-testid="approve-selected"]');
    for (const id of ids)
      await page.waitForSelector(`${row(ws, id)}[data-status="applied"]`, { timeout: 60_000 });
    const applied = (await h.stack.store.readStream(`workspace-${ws}`))
      .filter((e) => e.type === "ActionApplied")
      .map((e) => (e.data as { actionId: number }).actionId);
    assert.deepEqual(applied, ids, "ActionApplied events follow submission order");
    const order = h
      .memoryState()
      .map((l) => /"name":"(Batch\d+)"/.exec(l)?.[1])
      .filter(Boolean);
    assert.deepEqual(order, names, "the memory server received them in submission order");
    await page.context().close();
  });

  test("approving a selection shows its progress, counts out of the total from the live notices, until every one is final", async () => {
    const ws = await h.workspace("mcp://memory");
    const ids = await createEntities(
      ws,
      Array.from({ length: 7 }, (_, i) => `Progress${i}`),
    );
    // Accepted when submitted; the memory server refuses it when applied (no such entity).
    const failing = returned<{ actionId: number }>(
      await h.exec(
        ws,
        `export default async (env: any) => env.MEMORY.add_observations({ observations: [{ entityName: "Nobody", contents: ["x"] }] });`,
      ),
    ).actionId;
    const page = await openApp(browser, base, tokenOf("dev-approver"));
    for (const id of [failing, ...ids].reverse()) await page.click(`${row(ws, id)} [data-testid="select"]`);
    await page.waitForSelector('[data-testid="approve-selected"]:has-text("(8)")');
    // Every text the progress line shows, in order (a string: tsx helpers do not exist in the page).
    await page.evaluate(`(() => {
      window.progressTexts = [];
      const mark = () => {
        const el = document.querySelector('[data-testid="batch-progress"][data-workspace="${ws}"]');
        const text = el ? el.getAttribute("data-done") + " " + el.textContent : "";
        if (el && window.progressTexts.at(-1) !== text) window.progressTexts.push(text);
      };
      new MutationObserver(mark).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    })()`);
    await page.click('[data-testid="approve-selected"]');
    const done = `[data-testid="batch-progress"][data-workspace="${ws}"][data-done="true"]`;
    await page.waitForSelector(done, { timeout: 120_000 });
    const texts = await page.evaluate(() => (window as unknown as { progressTexts: string[] }).progressTexts);
    assert.match(
      (await page.textContent(done)) ?? "",
      /Approved 8 in test: 8 of 8 final: 7 applied, 1 failed, 0 rejected/,
    );
    assert.match(texts[0] ?? "", /^false Approving 8 in test: /, "the line shows before the batch is done");
    const finals = texts.map((t) => Number(/(\d+) of 8 final/.exec(t)?.[1]));
    for (let i = 1; i < finals.length; i++)
      assert.ok(finals[i]! >= finals[i - 1]!, `counts only grow: ${texts}`);
    await page.context().close();
  });

  test("keyboard: x, j, x, A approves two; focus moves to the row after them, so r rejects the next one, not a later one", async () => {
    const ws = await h.workspace("mcp://memory");
    const [k1, k2, k3, k4] = await createEntities(ws, ["Key1", "Key2", "Key3", "Key4"]);
    const page = await openApp(browser, base, tokenOf("dev-approver"));
    await page.selectOption('[data-testid="filter-workspace"]', ws);
    await page.waitForSelector(`${row(ws, k1 ?? 0)}[data-focused="true"]`);
    await page.keyboard.press("x");
    await page.keyboard.press("j");
    await page.keyboard.press("x");
    await page.keyboard.press("Shift+A");
    for (const id of [k1, k2])
      await page.waitForSelector(`${row(ws, id ?? 0)}[data-status="applied"]`, { timeout: 60_000 });
    await page.waitForSelector(`${row(ws, k3 ?? 0)}[data-focused="true"]`);
    await page.keyboard.press("r");
    await page.fill(`${row(ws, k3 ?? 0)} [data-testid="reject-reason"]`, "not this one");
    await page.click(`${row(ws, k3 ?? 0)} [data-testid="reject-confirm"]`);
    await page.waitForSelector(`${row(ws, k3 ?? 0)}[data-status="rejected"]`, { timeout: 60_000 });
    assert.equal(await page.getAttribute(row(ws, k4 ?? 0), "data-status"), "pending");
    await page.context().close();
  });

  test("rejecting an action with dependents shows the dependents rejected with 'needed action N'", async () => {
    const ws = await h.workspace("mcp://memory");
    const { a, b, c } = returned<{ a: number; b: number; c: number }>(
      await h.exec(
        ws,
        `export default async (env: any) => {
          const a = await env.MEMORY.create_entities({ entities: [{ name: "Eve", entityType: "person", observations: [] }] });
          const b = await env.MEMORY.add_observations({ observations: [{ entityName: "Eve", contents: ["x"] }] }, { dependsOn: [a.actionId] });
          const c = await env.MEMORY.add_observations({ observations: [{ entityName: "Eve", contents: ["y"] }] }, { dependsOn: [b.actionId] });
          return { a: a.actionId, b: b.actionId, c: c.actionId };
        }`,
      ),
    );
    const page = await openApp(browser, base, tokenOf("dev-approver"), `/ws/${ws}/actions/${a}`);
    await page.waitForSelector('[data-testid="deps-graph"]');
    await page.click('[data-testid="reject"]');
    assert.equal(await page.isDisabled('[data-testid="reject-confirm"]'), true, "no reason, no reject");
    await page.fill('[data-testid="reject-reason"]', "Eve is not a customer");
    await page.click('[data-testid="reject-confirm"]');
    await page.waitForSelector('[data-testid="status"]:has-text("rejected")');
    await page.evaluate(() => {
      window.location.hash = "#/";
    });
    for (const id of [b, c]) {
      const el = await page.waitForSelector(`${row(ws, id)}[data-status="rejected"]`, { timeout: 60_000 });
      assert.match((await el.textContent()) ?? "", /needed action \d+/);
    }
    assert.match((await page.textContent(row(ws, b))) ?? "", new RegExp(`needed action ${a}\\b`));
    await page.context().close();
  });

  test("Markdown with <script>, a javascript: link and a fake Approve button renders as inert text", async () => {
    const ws = await h.workspace("mcp://memory");
    const hostile =
      '<script>window.pwned = 1</script>\n\n[Approve](javascript:window.pwned=2)\n\n<button data-fake="1" onclick="window.pwned=3">Approve</button>\n\n<img src=x onerror="window.pwned=4">\n\n![pixel](http://127.0.0.1:9/track.png)';
    // 1. Through the real MCP gatekeeper: the hostile text is a tool argument (fenced by the kit).
    const [viaMcp] = await createEntities(ws, [hostile]);
    // 2. As a faulty gatekeeper could write it: raw Markdown straight into the stream, unfenced.
    const revision = await h.stack.store.streamRevision(`workspace-${ws}`);
    const appended = await h.stack.store.append(
      `workspace-${ws}`,
      [
        {
          type: "ActionSubmitted",
          data: ActionSubmitted.toJSON(
            ActionSubmitted.fromPartial({
              binding: "MEMORY",
              localId: "~raw",
              description: {
                title: "Hostile description",
                description: hostile,
                descriptionIsComplete: true,
                delivery: Delivery.DELIVERY_SIMULATE,
              },
              payloadJson: "{}",
              executionId: "faulty-gatekeeper",
            }),
          ),
          metadata: { actor: "test", caller: { kind: "agent", id: "x" } },
        },
      ],
      revision,
    );
    const raw = appended.nextExpectedRevision;
    const page = await openApp(browser, base, tokenOf("dev-approver"));
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    for (const id of [viaMcp ?? 0, raw]) {
      await page.evaluate((route) => {
        window.location.hash = route;
      }, `#/ws/${ws}/actions/${id}`);
      await page.waitForSelector(`[data-testid="description"]`);
      await page.waitForFunction(
        (t) => document.querySelector('[data-testid="description"]')?.textContent?.includes(t),
        "window.pwned = 1",
      );
      const desc = page.locator('[data-testid="description"]');
      assert.equal(
        await desc.locator("script, button, img, a[href], iframe, [onclick], [onerror]").count(),
        0,
        `action ${id}: no live element`,
      );
      const text = (await desc.textContent()) ?? "";
      assert.match(text, /<script>window\.pwned = 1<\/script>/, `action ${id}: the script tag shows as text`);
      assert.match(
        text,
        /javascript:window\.pwned=2|URL removed/,
        `action ${id}: the link is shown, not followed`,
      );
      const clickable = desc.locator("text=Approve").first();
      if (await clickable.count()) await clickable.click({ force: true });
      assert.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined);
      assert.equal(await page.evaluate(() => window.location.protocol), "http:");
    }
    assert.ok(!requests.some((u) => u.includes("track.png") || u.endsWith("/x")), "no image was fetched");
    await page.context().close();
  });

  test("NATS killed mid-session: an action submitted while it is down shows within 5 s of its return", async (t) => {
    const ws = await h.workspace("mcp://memory");
    const page = await openApp(browser, base, tokenOf("dev-approver"));
    await page.waitForSelector('[data-testid="pending-count"]');
    await nats.kill();
    const [id] = await createEntities(ws, ["WhileDown"]);
    // Keeps NATS down a moment after the submission, so its notice is sent into the outage (an absence
    // of delivery has no event to wait on); the property checked is the recovery after the restart.
    await new Promise((r) => setTimeout(r, 500));
    const restored = Date.now();
    await nats.restart();
    await page.waitForSelector(row(ws, id ?? 0), { timeout: 5000 });
    t.diagnostic(`visible ${Date.now() - restored} ms after NATS came back`);
    await page.context().close();
  });

  test("select all selects one workspace's pending rows; a selection spanning two names the count in each", async () => {
    const a = await h.workspace("mcp://memory");
    const b = await h.workspace("mcp://memory");
    const inA = await createEntities(a, ["SelA1", "SelA2", "SelA3"]);
    const inB = await createEntities(b, ["SelB1", "SelB2"]);
    const page = await openApp(browser, base, tokenOf("dev-approver"));
    const checked = (ws: string, id: number) => page.isChecked(`${row(ws, id)} [data-testid="select"]`);
    await page.waitForSelector(row(b, inB[1] as number));
    await page.click(`section[data-workspace="${a}"] [data-testid="select-workspace"]`);
    await page.waitForSelector('[data-testid="approve-selected"]:has-text("(3)")');
    for (const id of inA)
      assert.equal(await checked(a, id), true, `#${id} in the chosen workspace is selected`);
    for (const id of inB) assert.equal(await checked(b, id), false, `#${id} in the other workspace is not`);
    assert.equal(await page.locator('[data-testid="selected-per-workspace"]').count(), 0);
    await page.click(`section[data-workspace="${b}"] [data-testid="select-workspace"]`);
    await page.waitForSelector('[data-testid="approve-selected"]:has-text("(5)")');
    const perWorkspace = (await page.textContent('[data-testid="selected-per-workspace"]')) ?? "";
    assert.match(perWorkspace, /3 in .*2 in|2 in .*3 in/, "the toolbar names the count in each workspace");
    await page.context().close();
  });

  test("an auditor sees everything and cannot decide: no buttons, and the API refuses the same call", async () => {
    const ws = await h.workspace("mcp://memory");
    const [id] = await createEntities(ws, ["Audited"]);
    const page = await openApp(browser, base, tokenOf("dev-auditor"), `/ws/${ws}/actions/${id}`);
    await page.waitForSelector('[data-testid="read-only"]');
    await page.waitForSelector('[data-testid="status"]:has-text("pending")');
    assert.equal(await page.locator('[data-testid="approve"]').count(), 0);
    assert.equal(await page.locator('[data-testid="reject"]').count(), 0);
    const res = await page.evaluate(
      async ([w, i, tok]) => {
        const r = await fetch(`/api/workspaces/${w}/actions/${i}/approve`, {
          method: "POST",
          headers: { authorization: `Bearer ${tok}`, "content-type": "application/json" },
          body: "{}",
        });
        return r.status;
      },
      [ws, String(id), tokenOf("dev-auditor")] as const,
    );
    assert.equal(res, 403);
    const still = await api<DecisionResult>(
      base,
      tokenOf("dev-auditor"),
      "GET",
      `/api/workspaces/${ws}/actions/${id}`,
    );
    assert.equal((still.body as unknown as { action: { status: string } }).action.status, "pending");
    await page.context().close();
  });

  test("screenshots of the inbox, a detail page and the log are readable at 1280×800 and 390×844", async () => {
    const ws = await h.workspace("mcp://memory");
    const ids = await createEntities(ws, ["Shot1", "Shot2", "Shot3"]);
    for (const [label, viewport] of [
      ["desktop", { width: 1280, height: 800 }],
      ["phone", { width: 390, height: 844 }],
    ] as const) {
      for (const [name, route, ready] of [
        ["inbox", "/", row(ws, ids[0] ?? 0)],
        ["detail", `/ws/${ws}/actions/${ids[1]}`, '[data-testid="description"]'],
        ["log", `/ws/${ws}/log`, '[data-testid="log-entry"]'],
      ] as const) {
        const page = await openApp(browser, base, tokenOf("dev-approver"), route, viewport);
        await page.waitForSelector(ready);
        assert.equal(await scrollsSideways(page), false, `${name} at ${label} does not scroll sideways`);
        const file = join(SCREENSHOTS, `${name}-${label}.png`);
        await page.screenshot({ path: file, fullPage: false });
        assert.ok(statSync(file).size > 5000, `${file} has content`);
        const fontPx = await page.evaluate(() => Number.parseFloat(getComputedStyle(document.body).fontSize));
        assert.ok(fontPx >= 13, `body text is ${fontPx}px`);
        await page.context().close();
      }
    }
    assert.ok(readFileSync(join(SCREENSHOTS, "inbox-phone.png")).subarray(1, 4).toString() === "PNG");
  });
});
