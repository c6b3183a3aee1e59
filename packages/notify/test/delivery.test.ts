import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freePort, waitUntil } from "@gatehouse/service-kit";
import {
  dispatchWaitingBatch,
  loadNotifyConfig,
  type NotifyConfig,
  postWebhook,
  reviewUrl,
  sendEmail,
  type WaitingBatch,
} from "../src/index.ts";

const python = join(
  process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"),
  "gatehouse",
  "python-mcp",
  "bin",
  "python",
);
const dir = mkdtempSync(join(tmpdir(), "notify-"));
const mailbox = join(dir, "mail.jsonl");
let smtp: ChildProcess;
let smtpPort = 0;
let hooks: Server;
let hookPort = 0;
const received: { path: string; body: unknown }[] = [];

const batch: WaitingBatch = {
  workspace: "ops",
  selection: { kind: "execution", executionId: "ex-7" },
  pending: 2,
  risky: 0,
  summaries: ["Write notes.md (3 lines)", "Edit <b>main.ts</b>"],
};

function mails(): { rcpt_tos: string[]; data: string }[] {
  try {
    return readFileSync(mailbox, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

before(async () => {
  smtpPort = await freePort();
  smtp = spawn(python, [join(import.meta.dirname, "fixtures", "smtp_sink.py"), mailbox, String(smtpPort)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    smtp.once("error", reject);
    smtp.once("exit", (code) =>
      reject(new Error(`the SMTP sink exited (${code}); run scripts/setup.sh for aiosmtpd`)),
    );
    smtp.stdout?.once("data", () => resolve());
  });
  hooks = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ path: req.url ?? "", body: JSON.parse(body) });
      res.statusCode = req.url === "/broken" ? 500 : 200;
      res.end("ok");
    });
  });
  await new Promise<void>((r) => hooks.listen(0, "127.0.0.1", r));
  hookPort = (hooks.address() as { port: number }).port;
});

after(() => {
  smtp?.stdin?.end();
  hooks?.close();
});

function config(): NotifyConfig {
  const registry = join(dir, "webhooks.yaml");
  writeFileSync(
    registry,
    `team-slack: {url: "http://127.0.0.1:${hookPort}/slack", format: slack}\n` +
      `ops-teams: {url: "http://127.0.0.1:${hookPort}/teams", format: teams}\n` +
      `broken: {url: "http://127.0.0.1:${hookPort}/broken", format: json}\n`,
  );
  return loadNotifyConfig({
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    from: "gatehouse@example.test",
    publicUrl: "https://gatehouse.example.test",
    webhooksFile: registry,
    timeoutMs: 3000,
  });
}

describe("delivery to real receivers", () => {
  it("an email reaches a real SMTP server with the subject and the review link", async () => {
    await sendEmail(["ana@example.test"], batch, config());
    const mail = await waitUntil("one email", () => (mails().length === 1 ? mails()[0] : undefined));
    assert.deepEqual(mail.rcpt_tos, ["ana@example.test"]);
    assert.match(mail.data, /^Subject: 2 writes wait for your review in ops$/m);
    // The body is quoted-printable: undo soft line breaks and =XX escapes before looking for the link.
    const body = mail.data
      .replace(/=\r?\n/g, "")
      .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    assert.ok(body.includes(reviewUrl("https://gatehouse.example.test", batch)), body);
  });

  it("registered Slack and Teams webhooks each get one body in their format", async () => {
    const cfg = config();
    await postWebhook("team-slack", batch, cfg);
    await postWebhook("ops-teams", batch, cfg);
    const slack = received.filter((r) => r.path === "/slack");
    const teams = received.filter((r) => r.path === "/teams");
    assert.equal(slack.length, 1);
    assert.equal(teams.length, 1);
    assert.ok(JSON.stringify(slack[0]?.body).includes("Edit &lt;b&gt;main.ts&lt;/b&gt;"));
    assert.equal((teams[0]?.body as { type: string } | undefined)?.type, "message");
  });

  it("a receiver's error is reported naming the webhook, not its URL", async () => {
    const cfg = config();
    await assert.rejects(postWebhook("broken", batch, cfg), (err: Error) => {
      assert.equal(err.message, "webhook broken: receiver answered 500");
      return true;
    });
  });
});

const quiet = { info: () => {}, warn: () => {} };

describe("dispatching a waiting batch by preferences", () => {
  it("emails only people with email on, posts once per shared webhook, and links the review page", async () => {
    const before = { mails: mails().length, slack: received.filter((r) => r.path === "/slack").length };
    const turn: WaitingBatch = { ...batch, workspace: "shop", selection: { kind: "turn", turnId: "t42" } };
    const result = await dispatchWaitingBatch(
      turn,
      [
        { email: "on@example.test", scopes: [{ workspace: "*", email: true, webhooks: ["team-slack"] }] },
        // email off for this workspace overrides the all-workspaces entry
        {
          email: "off@example.test",
          scopes: [
            { workspace: "*", email: true, webhooks: [] },
            { workspace: "shop", email: false, webhooks: ["team-slack", "gone"] },
          ],
        },
        { email: "elsewhere@example.test", scopes: [{ workspace: "other", email: true, webhooks: [] }] },
      ],
      config(),
      quiet,
    );
    assert.deepEqual(result, { emailed: 1, posted: ["team-slack"], failed: [] });
    const mail = await waitUntil("the email", () =>
      mails().length === before.mails + 1 ? mails().at(-1) : undefined,
    );
    assert.deepEqual(mail.rcpt_tos, ["on@example.test"]);
    const slack = received.filter((r) => r.path === "/slack");
    assert.equal(slack.length, before.slack + 1);
    assert.ok(JSON.stringify(slack.at(-1)?.body).includes("#/ws/shop/review?turn=t42"));
  });

  it("sends nothing for a batch with no pending writes", async () => {
    const before = { mails: mails().length, hooks: received.length };
    const result = await dispatchWaitingBatch(
      { ...batch, pending: 0, summaries: [] },
      [{ email: "on@example.test", scopes: [{ workspace: "*", email: true, webhooks: ["team-slack"] }] }],
      config(),
      quiet,
    );
    assert.deepEqual(result, { emailed: 0, posted: [], failed: [] });
    assert.equal(received.length, before.hooks);
    assert.equal(mails().length, before.mails);
  });

  it("never rejects: a failing webhook is logged by name and the others still go out", async () => {
    const warnings: string[] = [];
    const result = await dispatchWaitingBatch(
      batch,
      [{ scopes: [{ workspace: "*", email: true, webhooks: ["broken", "ops-teams"] }] }],
      config(),
      { info: () => {}, warn: (o) => warnings.push(JSON.stringify(o)) },
    );
    assert.deepEqual(result.posted, ["ops-teams"]);
    assert.deepEqual(result.failed, ["broken"]);
    assert.ok(
      warnings.some((w) => w.includes("webhook broken") && !w.includes("127.0.0.1")),
      warnings.join(),
    );
  });
});

describe("settings", () => {
  it("refuses a webhook with an unknown format, naming it and the allowed ones", () => {
    const registry = join(dir, "bad.json");
    writeFileSync(registry, JSON.stringify({ x: { url: "http://h/", format: "discord" } }));
    assert.throws(
      () => loadNotifyConfig({ publicUrl: "http://h", webhooksFile: registry }),
      /webhooks\.x\.format: webhook format must be slack, teams or json/,
    );
  });
  it("refuses an SMTP URL that carries credentials and asks for host:port", () => {
    assert.throws(
      () => loadNotifyConfig({ publicUrl: "http://h", smtpUrl: "smtp://u:p@h:25", from: "a@b.c" }),
      /smtpUrl: SMTP URL must look like smtp:\/\/host:port/,
    );
  });
  it("refuses an SMTP URL without a from address", () => {
    assert.throws(
      () => loadNotifyConfig({ publicUrl: "http://h", smtpUrl: "smtp://h:25" }),
      /needs a from address/,
    );
  });
});
