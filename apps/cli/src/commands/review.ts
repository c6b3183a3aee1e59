/**
 * `gatehouse review <ws> [--turn <id>]`: walks the pending actions of a workspace (or of one
 * execution or agent turn) on the terminal like `git add -p` — risky ones first, each shown in full
 * (show-text.ts) — and submits one decision at the end: the approvals as one ApproveBatch carrying
 * the description digest of every record shown (the service refuses the whole batch when one
 * description changed since), then the rejections. Holding an action holds what depends on it.
 */
import { createInterface, type Interface } from "node:readline/promises";
import type { ActionRecord, DecisionsClient } from "@gatehouse/proto";
import type { Command } from "commander";
import { type BatchResult, followBatch } from "../batch-follow.ts";
import { finished, progressView } from "../batch-progress.ts";
import { reportBatch } from "../batch-report.ts";
import { call, decisionsClient, describeGrpcError, kernelClient } from "../clients.ts";
import { actionsTable, terminalSafe } from "../output.ts";
import { planSummary, type ReviewPlan, ReviewSession, reviewOrder } from "../review-plan.ts";
import { showText } from "../show-text.ts";
import { personArg } from "./members.ts";
import { type GlobalOptions, parseDuration, run, who } from "./shared.ts";

/** Description text longer than this many lines is cut in the walk; `d` prints all of it. */
const TEXT_LINES = 40;

const KEYS = "y,n,r,d,a,q,?";

const HELP = [
  "y - approve this action",
  "n - hold it (leave it pending); the actions that depend on it are held too",
  "r - reject it, with a reason (asked next); the actions that depend on it are rejected too",
  "d - view its whole description text (diff, preview)",
  "a - approve this action and all remaining ones (each is listed)",
  "q - stop here and submit; the actions not reviewed stay pending",
  "? - this help",
].join("\n");

/** How {@link submitReview} ended. */
export type SubmitOutcome =
  /** The approval service refused the approvals (e.g. a stale digest): nothing was approved or rejected. */
  | { refused: string }
  /** The approvals were recorded and followed (`batch` undefined when none were sent), then the rejections sent. */
  | { batch: BatchResult | undefined; rejected: ActionRecord[]; rejectErrors: string[] };

export interface SubmitOptions {
  decisions: DecisionsClient;
  workspaceId: string;
  plan: ReviewPlan;
  /** "user:<id>", recorded with every decision. */
  decidedBy: string;
  /** Give up following the approvals after this long without a change, ms. */
  stallMs: number;
  /** Progress as JSON lines instead of a bar / plain lines. */
  json: boolean;
}

/**
 * Submits a review's decision: first `plan.approve` as one ApproveBatch bound to
 * `plan.descriptionDigests` (all or nothing) and followed until each approved action is final,
 * then one Reject per `plan.reject`. When the approval is refused (a digest that is not the stored
 * description's, an action decided meanwhile), no rejection is sent either: `{refused}` with the
 * service's words, naming the action. Prints the approved batch's report (batch-report.ts).
 * @throws nothing for refusals; a rejection's error is collected in `rejectErrors`.
 */
export async function submitReview(o: SubmitOptions): Promise<SubmitOutcome> {
  let batch: BatchResult | undefined;
  if (o.plan.approve.length) {
    const view = progressView(o.json, process.stdout, o.plan.approve.length);
    try {
      batch = await followBatch({
        decisions: o.decisions,
        workspaceId: o.workspaceId,
        actionIds: o.plan.approve,
        all: false,
        decidedBy: o.decidedBy,
        expected: o.plan.approve,
        stallMs: o.stallMs,
        descriptionDigests: o.plan.descriptionDigests,
        onProgress: (c) => (c.approved > 0 || finished(c) > 0 ? view.update(c) : undefined),
      });
    } catch (err) {
      return { refused: describeGrpcError(err, "approval") };
    } finally {
      view.stop();
    }
    reportBatch(batch, {
      workspaceId: o.workspaceId,
      expected: o.plan.approve,
      stallMs: o.stallMs,
      json: o.json,
    });
  }
  const rejected: ActionRecord[] = [];
  const rejectErrors: string[] = [];
  for (const r of o.plan.reject) {
    try {
      const res = await call(o.decisions, o.decisions.reject, {
        workspaceId: o.workspaceId,
        actionId: r.id,
        decidedBy: o.decidedBy,
        reason: r.reason,
      });
      rejected.push(...res.actions);
    } catch (err) {
      rejectErrors.push(`rejecting #${r.id}: ${describeGrpcError(err, "approval")}`);
    }
  }
  return { batch, rejected, rejectErrors };
}

/** The whole description text of `a` for `d`: every line, the preview, and a note when cut by its gatekeeper. */
function fullText(a: ActionRecord): string {
  const d = a.description;
  const out: string[] = [];
  if (d?.description) out.push(terminalSafe(d.description));
  if (d?.preview) out.push("preview:", terminalSafe(d.preview));
  if (d && !d.descriptionIsComplete) {
    out.push("(the gatekeeper cut this description to fit its budget: it is not complete)");
  }
  return out.length ? out.join("\n") : "(no description text or preview for this action)";
}

/** One line for an action approved with `a` without being shown in full: id, summary, risks. */
function oneLine(a: ActionRecord): string {
  const d = a.description;
  const risks = d?.risks.length ? `  RISK ${d.risks.map((r) => `${r.kind}: ${r.reason}`).join("; ")}` : "";
  return terminalSafe(`#${a.id} ${d?.summary || d?.title || ""}${risks}`);
}

/** A question on the terminal; null when the input ended (Ctrl-D) or Ctrl-C closed it. */
function asker(rl: Interface): (q: string) => Promise<string | null> {
  const closed = new Promise<null>((r) => rl.once("close", () => r(null)));
  return (q) =>
    Promise.race([rl.question(q).catch(() => null), closed]).then((v) => (v === null ? null : v.trim()));
}

/**
 * The walk itself: asks about each undecided action of `session.shown`, in order. Returns false
 * when the person ended it with Ctrl-C or Ctrl-D (nothing is submitted then).
 */
async function walk(
  rl: Interface,
  session: ReviewSession,
  all: ActionRecord[],
  say: (s: string) => void,
): Promise<boolean> {
  const ask = asker(rl);
  const shown = session.shown;
  for (const [i, a] of shown.entries()) {
    if (!session.undecided(a.id)) continue;
    say(`\n── ${i + 1}/${shown.length} ${"─".repeat(40)}`);
    say(showText(a, all, { maxTextLines: TEXT_LINES, moreHint: "d shows the whole text" }));
    for (;;) {
      const answer = await ask(`Approve #${a.id} [${KEYS}]? `);
      if (answer === null) return false;
      const key = answer.toLowerCase();
      if (key === "y") {
        for (const n of session.approve(a.id)) say(n);
      } else if (key === "n") {
        for (const n of session.hold(a.id)) say(n);
      } else if (key === "r") {
        let reason = "";
        while (!reason) {
          const r = await ask(`Reason for rejecting #${a.id} (shown to the agent): `);
          if (r === null) return false;
          reason = r;
        }
        for (const n of session.reject(a.id, reason)) say(n);
      } else if (key === "d") {
        say(fullText(a));
        continue;
      } else if (key === "a") {
        for (const n of session.approve(a.id)) say(n);
        for (const rest of shown.slice(i + 1)) {
          if (!session.undecided(rest.id)) continue;
          say(`also approving ${oneLine(rest)}`);
          for (const n of session.approve(rest.id)) say(n);
        }
        return true;
      } else if (key === "q") {
        return true;
      } else {
        say(HELP);
        continue;
      }
      break;
    }
  }
  return true;
}

/**
 * A header for `--turn`: the execution's chat message, outcome and the first lines of its snippet
 * (Kernel.GetExecution); empty when the kernel does not know the id (e.g. a built-in agent turn id,
 * whose executions are "<turn>.<step>.<n>").
 */
async function turnHeader(ws: string, turn: string): Promise<string> {
  const k = kernelClient();
  try {
    const v = await call(k, k.getExecution, { workspaceId: ws, executionId: turn }, 10_000);
    const code = v.code.split("\n");
    return [
      `execution ${v.executionId}: ${v.ok ? "ok" : `failed: ${v.error}`}, ${v.durationMs} ms, ${v.executedAt}`,
      ...(v.chatMessage ? [`chat message: ${v.chatMessage}`] : []),
      "snippet:",
      ...code.slice(0, 15).map((l) => `  ${l}`),
      ...(code.length > 15 || v.codeTruncated ? [`  … (${code.length - 15} more lines)`] : []),
    ]
      .map(terminalSafe)
      .join("\n");
  } catch {
    return "";
  } finally {
    k.close();
  }
}

export function registerReviewCommand(program: Command, globals: () => GlobalOptions): void {
  program
    .command("review <workspace>")
    .description(
      "walk the pending actions on the terminal like `git add -p`, risky ones first, each in full: y approve, n hold, r reject, d view text, a approve the rest, q stop; then submit one decision whose approvals are bound to the descriptions shown",
    )
    .option(
      "--turn <id>",
      "only the actions of this execution or built-in agent turn (the execution line of `gatehouse show`, executionId in `exec --json`)",
    )
    .option("--by <person>", 'who decides, "user:<id>" (default: user:$GATEHOUSE_USER or user:$USER)')
    .option(
      "--stall-timeout <duration>",
      "give up following the approvals when nothing happened to them for this long, e.g. 30s, 10m",
      "2m",
    )
    .action((ws: string, opts: { turn?: string; by?: string; stallTimeout: string }) =>
      run("approval", async () => {
        const stallMs = parseDuration(opts.stallTimeout, "--stall-timeout");
        const decidedBy = personArg(opts.by ?? who("--by"), "--by");
        if (!process.stdin.isTTY) {
          throw new Error(
            "gatehouse review asks about each action on a terminal, and stdin is not one; from a script, decide with `gatehouse approve` and `gatehouse reject` (after `gatehouse show`)",
          );
        }
        const say = (s: string) => process.stdout.write(`${s}\n`);
        const c = decisionsClient();
        const { actions } = await call(c, c.listActions, { workspaceId: ws, pendingOnly: false });
        const shown = reviewOrder(actions, opts.turn);
        const scope = opts.turn ? `${ws} for turn ${terminalSafe(opts.turn)}` : ws;
        if (!shown.length) {
          say(`nothing pending in ${scope}`);
          return;
        }
        if (opts.turn) {
          const header = await turnHeader(ws, opts.turn);
          if (header) say(header);
        }
        const risky = shown.filter((a) => a.description?.risks.length).length;
        say(
          `${shown.length} pending action(s) in ${scope}${risky ? `, ${risky} with risks (shown first)` : ""}; ? for help`,
        );
        const session = new ReviewSession(shown, actions);
        const rl = createInterface({ input: process.stdin, output: process.stdout });
        let interrupted = false;
        rl.on("SIGINT", () => {
          interrupted = true;
          rl.close();
        });
        const completed = await walk(rl, session, actions, say);
        rl.close();
        if (!completed) {
          process.stderr.write(
            `gatehouse: ${interrupted ? "interrupted" : "input ended"}; nothing was submitted (every action is still pending)\n`,
          );
          process.exitCode = interrupted ? 130 : 1;
          return;
        }
        for (const n of session.holdRest()) say(n);
        const plan = session.plan();
        say(`\n${planSummary(plan)}`);
        if (!plan.approve.length && !plan.reject.length) {
          say("nothing to submit; every action stays pending");
          return;
        }
        const outcome = await submitReview({
          decisions: c,
          workspaceId: ws,
          plan,
          decidedBy,
          stallMs,
          json: globals().json,
        });
        if ("refused" in outcome) {
          process.stderr.write(
            `gatehouse: the approval service refused the decision, so nothing was approved or rejected: ${terminalSafe(outcome.refused)}; run \`gatehouse review ${ws}\` again to see the current descriptions\n`,
          );
          process.exitCode = 1;
          return;
        }
        if (outcome.rejected.length) say(`rejected:\n${actionsTable(outcome.rejected)}`);
        for (const e of outcome.rejectErrors) process.stderr.write(`gatehouse: ${terminalSafe(e)}\n`);
        if (outcome.rejectErrors.length) process.exitCode = 1;
        if (plan.hold.length) say(`held (still pending): ${plan.hold.map((id) => `#${id}`).join(", ")}`);
      }),
    );
}
