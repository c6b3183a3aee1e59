/**
 * A rollout as the gateway's clients see it, with every service its own process (split-stack.ts):
 * a steady stream of API requests goes through two gateways behind a balancer that, like a Kubernetes
 * Service, sends requests only to gateways whose `/healthz` answers 200 (probed every 100 ms). Then
 * the kernel restarts (SIGTERM, then started again on its port), the approval service restarts, and
 * the gateways are replaced one after the other (SIGTERM: each drains for GATEWAY_DRAIN_SECONDS).
 * No request may fail: a restarting backend is waited for (callUnary), a stopping gateway keeps
 * serving until the balancer has stopped sending to it.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type NatsServerProcess, startNatsServer } from "@gatehouse/live-notices/nats-server";
import { waitUntil } from "@gatehouse/service-kit";
import { type SplitStack, startSplitStack } from "../support/split-stack.ts";

const TOKEN = "rolling-approver-token-0001";
const DRAIN_SECONDS = 3;

let nats: NatsServerProcess | undefined;
let stack: SplitStack | undefined;

before(async () => {
  nats = await startNatsServer();
  stack = await startSplitStack(
    {},
    {
      natsUrl: nats.url,
      gateways: 2,
      devTokens: [{ token: TOKEN, subject: "rolling", roles: ["approver", "admin"] }],
      gatewayEnv: { GATEWAY_DRAIN_SECONDS: String(DRAIN_SECONDS) },
    },
  );
});

after(async () => {
  await stack?.close();
  await nats?.close();
});

/** Sends requests only to gateways whose ops `/healthz` answered 200 at the last probe (every 100 ms). */
class ReadinessBalancer {
  private readonly ready = new Set<number>();
  private next = 0;
  private probing = true;
  private readonly loop: Promise<void>;

  constructor(
    readonly urls: string[],
    private readonly opsUrls: string[],
  ) {
    this.loop = (async () => {
      while (this.probing) {
        await Promise.all(
          this.opsUrls.map(async (ops, i) => {
            const ok = await fetch(`${ops}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
              (r) => r.status === 200,
              () => false,
            );
            if (ok) this.ready.add(i);
            else this.ready.delete(i);
          }),
        );
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
  }

  isReady(i: number): boolean {
    return this.ready.has(i);
  }

  /** A ready gateway's base URL, round robin. @throws Error when none is ready. */
  pick(): string {
    const ready = [...this.ready].sort();
    if (ready.length === 0) throw new Error("no gateway is ready");
    return this.urls[ready[this.next++ % ready.length] as number] as string;
  }

  async close(): Promise<void> {
    this.probing = false;
    await this.loop;
  }
}

test("a steady stream of requests through two gateways while the kernel restarts, the approval service restarts and each gateway is replaced: none fails", async () => {
  assert.ok(stack);
  const s = stack;
  const balancer = new ReadinessBalancer(s.gatewayUrls, s.gatewayOpsUrls);
  const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  await waitUntil("both gateways ready", () => balancer.isReady(0) && balancer.isReady(1));
  const created = await fetch(`${balancer.pick()}/api/workspaces`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ name: "rolling" }),
  });
  assert.equal(created.status, 201, await created.clone().text());
  const ws = ((await created.json()) as { id: string }).id;

  // One request every 100 ms, not waiting for the previous one (clients do not line up): the list of
  // workspaces (the kernel) and the workspace's log (the approval service), in turn.
  const paths = ["/api/workspaces", `/api/workspaces/${ws}/log`];
  const outcomes: { path: string; ok: boolean; what: string; ms: number }[] = [];
  const inFlight = new Set<Promise<void>>();
  let sending = true;
  let sent = 0;
  const sender = (async () => {
    while (sending) {
      const path = paths[sent++ % paths.length] as string;
      const t0 = performance.now();
      const p = (async () => {
        try {
          const res = await fetch(`${balancer.pick()}${path}`, {
            headers: auth,
            signal: AbortSignal.timeout(60_000),
          });
          const text = await res.text();
          outcomes.push({
            path,
            ok: res.ok,
            what: `${res.status} ${text.slice(0, 200)}`,
            ms: performance.now() - t0,
          });
        } catch (err) {
          outcomes.push({
            path,
            ok: false,
            what: String((err as Error).cause ?? err),
            ms: performance.now() - t0,
          });
        }
      })();
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const answeredAfter = async (what: string, n: number) => {
    const from = outcomes.length;
    await waitUntil(what, () => outcomes.length >= from + n, { timeoutMs: 120_000 });
  };
  const phases: Record<string, number> = {};
  const phase = async (name: string, run: () => Promise<void>) => {
    const from = sent;
    await run();
    await answeredAfter(`answers after: ${name}`, 10);
    phases[name] = sent - from;
  };
  try {
    await answeredAfter("the first answers", 10);
    for (const backend of ["kernel", "approval"] as const) {
      await phase(`${backend} restarted`, async () => {
        await s.stop(backend);
        await s.start(backend);
      });
    }
    for (const [i, gateway] of (["gateway", "gateway-2"] as const).entries()) {
      await phase(`${gateway} replaced`, async () => {
        const t0 = performance.now();
        await s.stop(gateway);
        assert.ok(
          performance.now() - t0 >= DRAIN_SECONDS * 1000 - 100,
          `${gateway} exited ${Math.round(performance.now() - t0)} ms after SIGTERM, before its drain ended`,
        );
        await s.start(gateway);
        await waitUntil(`${gateway} ready again`, () => balancer.isReady(i), { timeoutMs: 60_000 });
      });
    }
  } finally {
    sending = false;
    await sender;
    await Promise.all([...inFlight]);
    await balancer.close();
  }
  const failed = outcomes.filter((o) => !o.ok);
  const slowest = Math.round(Math.max(...outcomes.map((o) => o.ms)));
  console.log(
    `rolling: ${outcomes.length} requests, ${failed.length} failed, slowest ${slowest} ms; sent per phase ${JSON.stringify(phases)}`,
  );
  assert.deepEqual(
    failed.map((f) => `${f.path}: ${f.what}`),
    [],
    `${failed.length} of ${outcomes.length} requests failed`,
  );
  for (const [name, n] of Object.entries(phases)) assert.ok(n >= 10, `${n} requests sent while ${name}`);
});
