import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  bound,
  emailMessage,
  escapeHtml,
  escapeSlack,
  jsonMessage,
  reviewUrl,
  slackMessage,
  teamsMessage,
  type WaitingBatch,
} from "../src/index.ts";

const hostile = "write <!channel> & <https://evil.example|click> <script>alert(1)</script> *bold* [x](y)";
const batch = (over: Partial<WaitingBatch> = {}): WaitingBatch => ({
  workspace: "team a",
  selection: { kind: "execution", executionId: "ex-1/2" },
  pending: 3,
  risky: 1,
  summaries: [hostile, "Write README.md (12 lines)", "DELETE FROM orders"],
  ...over,
});

describe("review link", () => {
  it("points at the hash route of the review page with the execution or turn, and no token", () => {
    assert.equal(
      reviewUrl("https://gh.example/", batch()),
      "https://gh.example/#/ws/team%20a/review?execution=ex-1%2F2",
    );
    assert.equal(
      reviewUrl("https://gh.example", batch({ selection: { kind: "turn", turnId: "t9" } })),
      "https://gh.example/#/ws/team%20a/review?turn=t9",
    );
  });
});

describe("escaping", () => {
  it("Slack escaping turns & < > into entities so text cannot form links or mentions", () => {
    assert.equal(escapeSlack("<!here> & <a|b>"), "&lt;!here&gt; &amp; &lt;a|b&gt;");
  });
  it("HTML escaping covers quotes for attributes", () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });
  it("bounding cuts long or multi-line summaries to one line ending in …", () => {
    const cut = bound(`${"é".repeat(300)}\nnext`, 50);
    assert.equal(Array.from(cut).length, 50);
    assert.ok(cut.endsWith("…"));
    assert.equal(bound("a\nb"), "a b");
  });
});

describe("titles in every script", () => {
  const title = "Ünïcødé 日本語 add \u202Etxt.exe\u200B file";
  const shown = "Ünïcødé 日本語 add ⟨U+202E⟩txt.exe⟨U+200B⟩ file";
  const b = batch({ workspace: "ワーク\u202Espace", summaries: [title] });
  it("every format keeps Ünïcødé and 日本語 and shows an RLO and a zero-width space as tokens, never raw", () => {
    const slack = JSON.stringify(slackMessage(b, "https://gh.example"));
    const teams = JSON.stringify(teamsMessage(b, "https://gh.example"));
    // The generic JSON body is for machines: its workspace field is the id as it is; its summaries are for people.
    const json = JSON.stringify(jsonMessage(b, "https://gh.example").summaries);
    const mail = emailMessage(b, "https://gh.example");
    for (const [format, text] of [
      ["slack", slack],
      ["teams", teams],
      ["json summaries", json],
      ["email text", mail.text],
      ["email html", mail.html],
    ] as const) {
      assert.ok(text.includes(shown), `${format}: ${text}`);
      assert.ok(!/[\u202E\u200B]/u.test(text), `${format} holds no raw invisible character`);
    }
    assert.equal(mail.subject, "3 writes wait for your review in ワーク⟨U+202E⟩space", "the email subject");
  });
  it("bounding counts grapheme clusters: an emoji ZWJ sequence or an accented letter is never cut apart", () => {
    assert.equal(bound("👨‍👩‍👧".repeat(3), 2), "👨‍👩‍👧…");
    assert.equal(bound("e\u0301".repeat(10), 3), "e\u0301e\u0301…");
  });
});

/** The parts of a Slack block these tests read. */
type SlackBlock = { text: { text: string }; elements: { url: string }[] };
/** The parts of a Teams attachment these tests read. */
type TeamsAttachment = {
  contentType: string;
  content: { type: string; actions: unknown; body: unknown };
};

describe("Slack message", () => {
  it("has a fallback text, escaped summaries and a Review button with the deep link", () => {
    const msg = slackMessage(batch(), "https://gh.example") as {
      text: string;
      blocks: SlackBlock[];
    };
    assert.match(
      msg.text,
      /^3 writes wait for your review in team a: https:\/\/gh\.example\/#\/ws\/team%20a\/review/,
    );
    const all = JSON.stringify(msg.blocks);
    assert.ok(!all.includes("<!channel>") && !all.includes("<script>"), all);
    assert.ok(all.includes("&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;"));
    assert.equal(msg.blocks.at(-1)?.elements[0]?.url, reviewUrl("https://gh.example", batch()));
    assert.match(msg.blocks[0]?.text.text ?? "", /1 risky/);
  });
  it("shows at most 10 summaries and counts the rest", () => {
    const many = batch({ pending: 25, summaries: Array.from({ length: 25 }, (_, i) => `write ${i}`) });
    const text = (slackMessage(many, "http://x") as { blocks: SlackBlock[] }).blocks[1]?.text.text as string;
    assert.equal(text.split("\n").filter((l) => l.startsWith("• ")).length, 10);
    assert.match(text, /and 15 more/);
  });
});

describe("Teams message", () => {
  it("is a message with one Adaptive Card whose Open URL action is the deep link and whose text is escaped", () => {
    const msg = teamsMessage(batch(), "https://gh.example") as {
      type: string;
      attachments: TeamsAttachment[];
    };
    assert.equal(msg.type, "message");
    const card = msg.attachments[0];
    assert.ok(card, "one attachment");
    assert.equal(card.contentType, "application/vnd.microsoft.card.adaptive");
    assert.equal(card.content.type, "AdaptiveCard");
    assert.deepEqual(card.content.actions, [
      { type: "Action.OpenUrl", title: "Review", url: reviewUrl("https://gh.example", batch()) },
    ]);
    const texts = (card.content.body as { text: string }[]).map((b) => b.text).join("\n");
    assert.ok(!texts.includes("<script>") && !texts.includes("[x](y)"), texts);
    assert.ok(texts.includes("\\*bold\\*"));
  });
});

describe("generic JSON message", () => {
  it("carries workspace, execution id, counts, bounded summaries and the review URL", () => {
    const msg = jsonMessage(batch(), "https://gh.example");
    assert.deepEqual(msg, {
      kind: "review_waiting",
      workspace: "team a",
      executionId: "ex-1/2",
      pending: 3,
      risky: 1,
      summaries: batch().summaries,
      moreSummaries: 0,
      reviewUrl: reviewUrl("https://gh.example", batch()),
    });
    assert.equal(jsonMessage(batch({ selection: { kind: "turn", turnId: "t" } }), "http://x").turnId, "t");
  });
});

describe("email", () => {
  it("has the subject 'N writes wait for your review in <workspace>', plain text and escaped HTML", () => {
    const mail = emailMessage(batch(), "https://gh.example");
    assert.equal(mail.subject, "3 writes wait for your review in team a");
    assert.equal(
      emailMessage(batch({ pending: 1 }), "http://x").subject,
      "1 write waits for your review in team a",
    );
    assert.ok(mail.text.includes(hostile));
    assert.ok(mail.text.includes(reviewUrl("https://gh.example", batch())));
    assert.ok(!mail.html.includes("<script>"));
    assert.ok(mail.html.includes("&lt;script&gt;"));
    assert.ok(mail.html.includes(`href="${reviewUrl("https://gh.example", batch())}"`));
  });
});
