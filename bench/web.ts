/**
 * `npm run bench:web` (also run by `npm run bench`): the approver web app's figures from issue 6,
 * each next to a baseline measured in the same run.
 *   - SubmitAction → row visible in Chromium (p50 over BENCH_WEB_SUBMITS, default 50), with the
 *     inbox already holding BENCH_WEB_PENDING pending actions; baseline: SubmitAction → the same
 *     notice read by a plain Node client of GET /api/events.
 *   - First load of the inbox holding BENCH_WEB_PENDING (default 1,000) pending actions, until every
 *     row is rendered (cold browser context each time); baseline: GET /api/inbox alone from Node.
 * Appends its rows to bench-results/web.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { startDevStack } from "@gatehouse/dev-stack";
import { launchBrowser } from "@gatehouse/e2e/support/browser";
import { api, openEvents } from "@gatehouse/e2e/support/gateway-client";
import { KernelClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import { envInt, envSandbox, log, type Row, returned, round, runBench, stats, unary } from "./support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const PENDING = envInt("BENCH_WEB_PENDING", 1000);
const SUBMITS = envInt("BENCH_WEB_SUBMITS", 50);
const LOADS = envInt("BENCH_WEB_LOADS", 5);
const SANDBOX = envSandbox();

async function main() {
  const work = mkdtempSync(join(tmpdir(), "gatehouse-bench-web-"));
  const stack = await startDevStack({ dataDir: work, sandbox: SANDBOX });
  const kernel = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
  const browser = await launchBrowser();
  const token = stack.devTokens.find((t) => t.subject === "dev-approver")?.token ?? "";
  const base = stack.addresses.gateway;
  const rows: Row[] = [];
  try {
    const exec = (ws: string, code: string) =>
      unary(kernel, kernel.executeCode, {
        workspaceId: ws,
        code,
        caller: { kind: "agent", id: "bench" },
        limits: { wallTimeMs: 120_000, heapMb: 0, outputBytes: 0 },
        executionId: "",
      });
    const workspace = async (name: string) => {
      const ws = (
        await unary(kernel, kernel.createWorkspace, { name, owner: "user:dev-approver", members: [] })
      ).id;
      await unary(kernel, kernel.introduceResource, { workspaceId: ws, url: "mcp://memory", name: "" });
      return ws;
    };
    const submit = (ws: string, prefix: string, n: number) =>
      exec(
        ws,
        `export default async (env: any) => {
          const ids: number[] = [];
          for (let i = 0; i < ${n}; i++) ids.push((await env.MEMORY.create_entities({ entities: [{ name: "${prefix}" + i, entityType: "t", observations: [] }] })).actionId);
          return ids;
        }`,
      ).then((r) => returned(r) as number[]);
    const submittedAt = async (ws: string, id: number) => {
      const [e] = await stack.store.readStream(`workspace-${ws}`, { fromRevision: id, maxCount: 1 });
      return Date.parse(e?.metadata.occurredAt ?? "");
    };

    log(`seeding ${PENDING} pending actions`);
    const big = await workspace("bench-big");
    for (let done = 0; done < PENDING; done += 100)
      await submit(big, `Seed${done}-`, Math.min(100, PENDING - done));

    // First load of the inbox with PENDING pending actions.
    const apiMs: number[] = [];
    const pageMs: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      let began = performance.now();
      const res = await api<{ workspaces: Array<{ pending: unknown[] }> }>(base, token, "GET", "/api/inbox");
      apiMs.push(performance.now() - began);
      const pending = res.body.workspaces.reduce((n, w) => n + w.pending.length, 0);
      if (pending !== PENDING) throw new Error(`inbox has ${pending} pending, expected ${PENDING}`);
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      began = performance.now();
      await page.goto(`${base}/#token=${encodeURIComponent(token)}`);
      await page.waitForFunction(
        (n) => document.querySelectorAll('[data-testid="action-row"][data-status="pending"]').length >= n,
        PENDING,
        { timeout: 120_000, polling: 50 },
      );
      pageMs.push(performance.now() - began);
      await context.close();
    }
    const api1 = stats(apiMs);
    const page1 = stats(pageMs);
    rows.push({
      id: "web.first_load",
      measurement: `inbox first load, ${PENDING} pending, every row rendered (p50 of ${LOADS})`,
      value: page1.p50,
      baseline: "GET /api/inbox alone (Node fetch) p50",
      baselineValue: api1.p50,
      unit: "ms",
      ratio: page1.p50 / api1.p50,
    });

    // SubmitAction → row visible, with the big inbox open.
    log(`SubmitAction → row visible x${SUBMITS}`);
    const small = await workspace("bench-live");
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${base}/#token=${encodeURIComponent(token)}`);
    await page.waitForSelector('[data-testid="pending-count"]');
    // The page notes when each row first appears, from the mutation records only (a selector poll over
    // 1,000+ rows would itself load the page's main thread and inflate the figure).
    await page.evaluate(`(() => {
      window.seen = {};
      const note = (el) => {
        if (el.nodeType !== 1) return;
        const rows = el.matches('[data-testid="action-row"]') ? [el] : el.querySelectorAll('[data-testid="action-row"]');
        for (const r of rows) {
          const key = r.getAttribute("data-workspace") + "/" + r.getAttribute("data-action-id");
          if (window.seen[key] === undefined) window.seen[key] = Date.now();
        }
      };
      new MutationObserver((records) => {
        for (const m of records) for (const n of m.addedNodes) note(n);
      }).observe(document.body, { subtree: true, childList: true });
    })()`);
    const visible: number[] = [];
    for (let i = 0; i < SUBMITS; i++) {
      const [id] = await submit(small, `Live${i}-`, 1);
      const at = await submittedAt(small, id ?? 0);
      const key = `${small}/${id}`;
      await page.waitForFunction(
        (k) => (window as unknown as { seen: Record<string, number> }).seen[k] !== undefined,
        key,
        {
          timeout: 10_000,
          polling: 100,
        },
      );
      const seen = await page.evaluate(
        (k) => (window as unknown as { seen: Record<string, number> }).seen[k] ?? 0,
        key,
      );
      visible.push(seen - at);
    }
    // Baseline: the same path up to the gateway's event stream, read by a plain Node client.
    const stream = await openEvents(base, token);
    const noticed: number[] = [];
    for (let i = 0; i < SUBMITS; i++) {
      const [id] = await submit(small, `Notice${i}-`, 1);
      const at = await submittedAt(small, id ?? 0);
      const isIt = (e: { event: string; data: unknown }) =>
        e.event === "notice" &&
        (e.data as { workspaceId: string }).workspaceId === small &&
        (e.data as { revision: number }).revision === id;
      await stream.waitFor(isIt);
      noticed.push((stream.events.find(isIt)?.at ?? Number.NaN) - at);
    }
    stream.close();
    await context.close();
    const vis = stats(visible);
    const not = stats(noticed);
    rows.push({
      id: "web.submit_to_row",
      measurement: `SubmitAction → row visible in Chromium p50 (${SUBMITS}, ${PENDING} others pending)`,
      value: vis.p50,
      baseline: "SubmitAction → notice at a Node client of /api/events p50",
      baselineValue: Math.max(not.p50, 1),
      unit: "ms",
      ratio: vis.p50 / Math.max(not.p50, 1),
    });
    for (const r of rows) {
      r.ratio = round(r.ratio, 2);
      console.log(
        `${r.measurement}: ${round(r.value, 1)} ms | ${r.baseline}: ${round(r.baselineValue, 1)} ms | ${r.ratio}x`,
      );
    }
    console.log(
      `row visible p99 ${vis.p99} ms, max ${vis.max} ms; first load max ${page1.max} ms; ${cpus().length} CPUs`,
    );
    const out = join(ROOT, "bench-results");
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, "web.json"),
      `${JSON.stringify({ at: new Date().toISOString(), rows, visible: vis, first: page1, api: api1 }, null, 2)}\n`,
    );
  } finally {
    await browser.close();
    kernel.close();
    await stack.close();
    rmSync(work, { recursive: true, force: true });
  }
}

runBench(main);
