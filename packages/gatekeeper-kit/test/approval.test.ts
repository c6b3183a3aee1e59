import assert from "node:assert/strict";
import { after, test } from "node:test";
import { status } from "@grpc/grpc-js";
import { connectApprovalQueue } from "../src/approval-client.ts";
import { ApprovalRefused } from "../src/errors.ts";
import { observePage, pageOf } from "../src/observe.ts";
import { RecordingApprovalQueue } from "./helpers.ts";

const TOKEN = "gh1.caller-token.not-a-secret";
const fake = await new RecordingApprovalQueue().start();
const approval = connectApprovalQueue(`127.0.0.1:${fake.port}`);
after(() => {
  approval.close();
  fake.close();
});

const DESC = {
  title: "List files",
  description: "Listed `docs/`",
  containsRestrictedData: false,
  kind: "git.ls",
};

test("every ApprovalQueue call carries the caller token and resolves to the log id", async () => {
  fake.refuse = null;
  const obs = await approval.authorizeObservation(TOKEN, { ...DESC, page: 0 });
  const act = await approval.submitAction(
    TOKEN,
    "~1",
    {
      title: "Commit",
      description: "d",
      descriptionIsComplete: true,
      delivery: 1,
      dependsOn: [],
      implementsRevert: 0,
      autoApprovable: false,
      actionKind: undefined,
      classifiedBy: "test",
      egress: false,
      summary: "",
      fields: [],
      risks: [],
      preflightWarnings: [],
      preview: "",
    },
    '{"x":1}',
  );
  assert.ok(obs > 0 && act > obs);
  assert.equal(fake.observations.at(-1)?.callerToken, TOKEN);
  assert.deepEqual(fake.submissions.at(-1), { callerToken: TOKEN, localId: "~1", payloadJson: '{"x":1}' });
  const rec = await approval.getActionForCaller(TOKEN, act);
  assert.equal(rec.id, act);
});

test("a refusal becomes ApprovalRefused naming the RPC and status, never the token", async () => {
  fake.refuse = status.FAILED_PRECONDITION;
  try {
    await assert.rejects(approval.authorizeObservation(TOKEN, { ...DESC, page: 0 }), (e: Error) => {
      assert.ok(e instanceof ApprovalRefused);
      assert.match(e.message, /AuthorizeObservation \(FAILED_PRECONDITION\)/);
      assert.ok(!e.message.includes(TOKEN));
      return true;
    });
  } finally {
    fake.refuse = null;
  }
});

test("paged reads authorize each page, with its number, before returning it", async () => {
  const files = Array.from({ length: 25 }, (_, i) => `docs/f${i}.md`);
  const before = fake.observations.length;
  const seen: string[] = [];
  let page = 0;
  for (;;) {
    const got = await observePage(
      approval,
      TOKEN,
      (s: ReturnType<typeof pageOf<string>>) => ({ ...DESC, title: `Listed ${s.items.length} files` }),
      page,
      async (p) => {
        // Nothing of this page may be returned before its observation exists.
        assert.equal(fake.observations.length, before + p);
        return pageOf(files, p, 10);
      },
    );
    assert.equal(fake.observations.length, before + page + 1);
    seen.push(...got.data.items);
    if (!got.data.more) break;
    page++;
  }
  assert.deepEqual(seen, files);
  const recorded = fake.observations.slice(before).map((o) => [o.description.page, o.description.title]);
  assert.deepEqual(recorded, [
    [0, "Listed 10 files"],
    [1, "Listed 10 files"],
    [2, "Listed 5 files"],
  ]);
});

test("a failed fetch records nothing and rethrows", async () => {
  const before = fake.observations.length;
  await assert.rejects(
    observePage(approval, TOKEN, DESC, 0, async () => {
      throw new Error("file not found");
    }),
    /file not found/,
  );
  assert.equal(fake.observations.length, before);
});

test("a refused observation withholds the data", async () => {
  fake.refuse = status.PERMISSION_DENIED;
  try {
    await assert.rejects(
      observePage(approval, TOKEN, DESC, 0, async () => "secret data"),
      ApprovalRefused,
    );
  } finally {
    fake.refuse = null;
  }
});

test("bad page numbers and sizes are refused before anything is fetched", async () => {
  let fetched = false;
  await assert.rejects(
    observePage(approval, TOKEN, DESC, -1, async () => {
      fetched = true;
    }),
    RangeError,
  );
  assert.equal(fetched, false);
  assert.throws(() => pageOf([1, 2], 0, 0), /pageSize must be a positive integer/);
  assert.deepEqual(pageOf([1, 2, 3], 1, 2), { items: [3], page: 1, more: false });
});
