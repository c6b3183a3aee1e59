/**
 * The gateway over the real stack: approval service, kernel, Temporal, real MCP memory server, and
 * a real nats-server carrying the live notices. Checks roles at the API (an auditor cannot decide,
 * whatever a UI shows), decision input errors, "approve with earlier", and the event stream's
 * resync after the NATS connection comes back.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type {
  ActionDetail,
  ApiError,
  DecisionResult,
  InboxResponse,
  LogResponse,
  Me,
} from "@gatehouse/gateway-contract";
import { type NatsServerProcess, startNatsServer } from "@gatehouse/live-notices/nats-server";
import { ActionStatus } from "@gatehouse/proto";
import { api, openEvents } from "../support/gateway-client.ts";
import { type Harness, returned, startHarness, unary } from "../support/harness.ts";

let h: Harness;
let nats: NatsServerProcess;
let base: string;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

before(async () => {
  nats = await startNatsServer();
  h = await startHarness(undefined, { natsUrl: nats.url });
  base = h.stack.addresses.gateway;
});
after(async () => {
  await h?.close();
  await nats?.close();
});

async function twoDependentWrites(ws: string): Promise<{ a: number; b: number }> {
  return returned(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const a = await env.MEMORY.create_entities({ entities: [{ name: "Gia", entityType: "person", observations: [] }] });
        const b = await env.MEMORY.add_observations({ observations: [{ entityName: "Gia", contents: ["reads"] }] }, { dependsOn: [a.actionId] });
        return { a: a.actionId, b: b.actionId };
      }`,
    ),
  );
}

describe("gateway API", () => {
  test("no token, a malformed header or an unknown token is 401 with a reason; /api/me names the roles", async () => {
    const none = await api<ApiError>(base, undefined, "GET", "/api/inbox");
    assert.equal(none.status, 401);
    assert.match(none.body.error.message, /Authorization: Bearer/);
    const unknown = await api<ApiError>(base, "gh_dev_not-a-real-token-000", "GET", "/api/inbox");
    assert.equal(unknown.status, 401);
    const me = await api<Me>(base, tokenOf("dev-auditor"), "GET", "/api/me");
    assert.deepEqual(me.body, {
      subject: "dev-auditor",
      name: "dev-auditor",
      roles: ["auditor"],
      canDecide: false,
      canSetRules: false,
    });
  });

  test("the log pages with limit/after and covers the whole log once; bad paging is a 400 naming the parameter", async () => {
    const ws = await h.workspace("mcp://memory");
    await twoDependentWrites(ws);
    const auditor = tokenOf("dev-auditor");
    const whole = await api<LogResponse>(base, auditor, "GET", `/api/workspaces/${ws}/log`);
    assert.equal(whole.status, 200);
    assert.equal(whole.body.nextAfter, undefined, "an unpaged log has no nextAfter");
    const ids: number[] = [];
    let after = 0;
    for (let pages = 0; ; pages++) {
      assert.ok(pages < 100, "paging ends");
      const page = await api<LogResponse>(
        base,
        auditor,
        "GET",
        `/api/workspaces/${ws}/log?limit=1&after=${after}`,
      );
      assert.equal(page.status, 200);
      assert.ok(page.body.entries.length <= 1);
      ids.push(...page.body.entries.map((e) => e.id));
      if (!page.body.nextAfter) break;
      after = page.body.nextAfter;
    }
    assert.deepEqual(
      ids,
      whole.body.entries.map((e) => e.id),
    );
    for (const [query, message] of [
      ["limit=0", /limit: a page size/],
      ["limit=abc", /limit: a page size/],
      ["limit=5001", /limit: a page size/],
      ["after=5", /after needs limit/],
      ["limit=5&until=1", /cannot be combined with until/],
    ] as const) {
      const bad = await api<ApiError>(base, auditor, "GET", `/api/workspaces/${ws}/log?${query}`);
      assert.equal(bad.status, 400, query);
      assert.equal(bad.body.error.code, "invalid_argument", query);
      assert.match(bad.body.error.message, message);
    }
  });

  test("an auditor sees the pending actions and every decision route refuses it, changing nothing", async () => {
    const ws = await h.workspace("mcp://memory");
    const { a, b } = await twoDependentWrites(ws);
    const auditor = tokenOf("dev-auditor");
    const inbox = await api<InboxResponse>(base, auditor, "GET", `/api/inbox?workspace=${ws}`);
    assert.equal(inbox.status, 200);
    assert.deepEqual(
      inbox.body.workspaces[0]?.pending.map((x) => x.id),
      [a, b],
    );
    const before = inbox.body.workspaces[0]?.revision;
    for (const [method, path, body] of [
      ["POST", `/api/workspaces/${ws}/actions/${a}/approve`, {}],
      ["POST", `/api/workspaces/${ws}/actions/${a}/reject`, { reason: "no" }],
      ["POST", `/api/workspaces/${ws}/approve-batch`, { actionIds: [a, b] }],
      [
        "PUT",
        `/api/workspaces/${ws}/rules`,
        { binding: "MEMORY", actionKindTag: "mcp.tool.create_entities", enabled: true },
      ],
    ] as const) {
      const res = await api<ApiError>(base, auditor, method, path, body);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.match(res.body.error.message, /dev-auditor has role\(s\) auditor/);
    }
    const approverRule = await api<ApiError>(
      base,
      tokenOf("dev-approver"),
      "PUT",
      `/api/workspaces/${ws}/rules`,
      {
        binding: "MEMORY",
        actionKindTag: "mcp.tool.create_entities",
        enabled: true,
      },
    );
    assert.equal(approverRule.status, 403, "rules need admin");
    const after = await api<InboxResponse>(base, auditor, "GET", `/api/inbox?workspace=${ws}`);
    assert.equal(after.body.workspaces[0]?.revision, before, "nothing was appended");
    assert.equal(after.body.workspaces[0]?.pending.length, 2);
  });

  test("reject needs a reason; approving past an undecided dependency is a 409 until 'approve with 1 earlier'; decidedBy is the person", async () => {
    const ws = await h.workspace("mcp://memory");
    const { a, b } = await twoDependentWrites(ws);
    const approver = tokenOf("dev-approver");
    const noReason = await api<ApiError>(
      base,
      approver,
      "POST",
      `/api/workspaces/${ws}/actions/${b}/reject`,
      { reason: "  " },
    );
    assert.equal(noReason.status, 400);
    assert.match(noReason.body.error.message, /reason: a reason is required/);
    const badId = await api<ApiError>(base, approver, "POST", `/api/workspaces/${ws}/actions/x1/approve`, {});
    assert.equal(badId.status, 400);
    assert.match(badId.body.error.message, /id: /);
    const unknownField = await api<ApiError>(
      base,
      approver,
      "POST",
      `/api/workspaces/${ws}/actions/${b}/approve`,
      { all: true },
    );
    assert.equal(unknownField.status, 400);

    const detail = await api<ActionDetail>(base, approver, "GET", `/api/workspaces/${ws}/actions/${b}`);
    assert.deepEqual(detail.body.undecidedDependencies, [a]);
    assert.deepEqual(
      detail.body.dependencies.map((x) => x.id),
      [a],
    );
    const refused = await api<ApiError>(
      base,
      approver,
      "POST",
      `/api/workspaces/${ws}/actions/${b}/approve`,
      {},
    );
    assert.equal(refused.status, 409);
    const approved = await api<DecisionResult>(
      base,
      approver,
      "POST",
      `/api/workspaces/${ws}/actions/${b}/approve`,
      {
        includeDependencies: true,
      },
    );
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    // The outcome arrives through the lifecycle; read the projection until both applied.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const view = await unary(h.decisions, h.decisions.listActions, { workspaceId: ws, pendingOnly: false });
      const done = view.actions.filter((x) => x.status === ActionStatus.ACTION_STATUS_APPLIED);
      if (done.length === 2) {
        assert.deepEqual(
          done.map((x) => x.decidedBy),
          ["dev-approver", "dev-approver"],
        );
        break;
      }
      assert.ok(Date.now() < deadline, "both applied within 60 s");
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(
      h.memoryState().some((l) => l.includes('"Gia"')),
      "the real memory server has Gia",
    );
  });

  test("loose ids, revisions past the head, unusable rule tags, missing bodies and unknown pages get errors naming the fix", async () => {
    const ws = await h.workspace("mcp://memory");
    const { a } = await twoDependentWrites(ws);
    const approver = tokenOf("dev-approver");
    const admin = tokenOf("dev-admin");
    const cases: Array<[string, string, string, unknown, number, RegExp]> = [
      [
        approver,
        "GET",
        `/api/workspaces/${ws}/actions/0x${a.toString(16)}`,
        undefined,
        400,
        /positive whole number in decimal/,
      ],
      [
        approver,
        "GET",
        `/api/workspaces/${ws}/log?until=99999`,
        undefined,
        400,
        /revision 99999 does not exist yet/,
      ],
      [
        approver,
        "POST",
        `/api/workspaces/${ws}/actions/${a}/reject`,
        {},
        400,
        /a reason is required: send \{"reason"/,
      ],
      [approver, "POST", `/api/workspaces/${ws}/approve-batch`, { ids: [a] }, 400, /actionIds is required/],
      [
        admin,
        "PUT",
        `/api/workspaces/${ws}/rules`,
        { binding: "MEMORY", actionKindTag: "bogus kind", enabled: true },
        400,
        /actionKindTag is an action kind's tag/,
      ],
      [approver, "GET", "/ws/x/actions/1", undefined, 404, /pages live under \/#\//],
    ];
    for (const [token, method, path, body, status, message] of cases) {
      const res = await api<ApiError>(base, token, method, path, body);
      assert.equal(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.error.message, message, `${method} ${path}`);
    }
    const view = await api<InboxResponse>(base, approver, "GET", `/api/inbox?workspace=${ws}`);
    assert.equal(view.body.workspaces[0]?.pending.length, 2, "nothing was decided");
  });

  test("a submitted write reaches an event-stream client as a notice over real NATS; after NATS is killed and restarted the client is told to resync", async () => {
    const ws = await h.workspace("mcp://memory");
    const stream = await openEvents(base, tokenOf("dev-auditor"));
    try {
      await stream.waitFor((e) => e.event === "resync"); // every connection starts with one
      const { a } = await twoDependentWrites(ws);
      await stream.waitFor(
        (e) =>
          e.event === "notice" &&
          (e.data as { workspaceId: string; type: string }).workspaceId === ws &&
          (e.data as { type: string }).type === "ActionSubmitted",
      );
      assert.ok(a > 0);
      const resyncsBefore = stream.events.filter((e) => e.event === "resync").length;
      await nats.kill();
      await nats.restart();
      await stream.waitFor(
        (e) =>
          e.event === "resync" && stream.events.filter((x) => x.event === "resync").length > resyncsBefore,
      );
    } finally {
      stream.close();
    }
  });
});
