import { headline, reviewUrl, shownSummaries, type WaitingBatch } from "./batch.js";
import { escapeHtml, escapeSlack, escapeTeams } from "./escape.js";

function riskLine(batch: WaitingBatch): string {
  return batch.risky > 0 ? `${batch.risky} risky (destructive, egress, irreversible or flagged content)` : "";
}

/** Slack incoming-webhook body: `text` (fallback) and `blocks` (header section, summaries, button). */
export function slackMessage(batch: WaitingBatch, publicUrl: string): Record<string, unknown> {
  const url = reviewUrl(publicUrl, batch);
  const { shown, more } = shownSummaries(batch);
  const lines = shown.map((s) => `• ${escapeSlack(s)}`);
  if (more > 0) lines.push(`…and ${more} more`);
  const head = escapeSlack(headline(batch));
  const risk = riskLine(batch);
  return {
    text: `${head}: ${url}`,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: `*${head}*${risk ? `\n:warning: ${risk}` : ""}` } },
      ...(lines.length > 0 ? [{ type: "section", text: { type: "mrkdwn", text: lines.join("\n") } }] : []),
      {
        type: "actions",
        elements: [{ type: "button", text: { type: "plain_text", text: "Review" }, url }],
      },
    ],
  };
}

/** Teams webhook/workflow body: a `message` with one Adaptive Card (1.4) attachment and an open-URL action. */
export function teamsMessage(batch: WaitingBatch, publicUrl: string): Record<string, unknown> {
  const url = reviewUrl(publicUrl, batch);
  const { shown, more } = shownSummaries(batch);
  const body: Record<string, unknown>[] = [
    { type: "TextBlock", text: escapeTeams(headline(batch)), weight: "Bolder", size: "Medium", wrap: true },
  ];
  const risk = riskLine(batch);
  if (risk) body.push({ type: "TextBlock", text: escapeTeams(risk), color: "Attention", wrap: true });
  for (const s of shown)
    body.push({ type: "TextBlock", text: `- ${escapeTeams(s)}`, wrap: true, spacing: "None" });
  if (more > 0) body.push({ type: "TextBlock", text: `and ${more} more`, isSubtle: true, wrap: true });
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          body,
          actions: [{ type: "Action.OpenUrl", title: "Review", url }],
        },
      },
    ],
  };
}

/** Generic JSON body for any receiver; strings are bounded, not escaped (JSON encoding is the escaping). */
export function jsonMessage(batch: WaitingBatch, publicUrl: string): Record<string, unknown> {
  const { shown, more } = shownSummaries(batch);
  return {
    kind: "review_waiting",
    workspace: batch.workspace,
    ...(batch.selection.kind === "execution"
      ? { executionId: batch.selection.executionId }
      : { turnId: batch.selection.turnId }),
    pending: batch.pending,
    risky: batch.risky,
    summaries: shown,
    moreSummaries: more,
    reviewUrl: reviewUrl(publicUrl, batch),
  };
}

/** An email for the batch: subject "N writes wait for your review in <workspace>", plain text and HTML. */
export function emailMessage(
  batch: WaitingBatch,
  publicUrl: string,
): { subject: string; text: string; html: string } {
  const url = reviewUrl(publicUrl, batch);
  const { shown, more } = shownSummaries(batch);
  const subject = headline(batch);
  const risk = riskLine(batch);
  const text = [
    `${subject}.`,
    ...(risk ? [risk] : []),
    "",
    ...shown.map((s) => `- ${s}`),
    ...(more > 0 ? [`...and ${more} more`] : []),
    "",
    `Review them (you will be asked to sign in): ${url}`,
  ].join("\n");
  const html = [
    `<p><strong>${escapeHtml(subject)}</strong></p>`,
    ...(risk ? [`<p style="color:#b00">${escapeHtml(risk)}</p>`] : []),
    shown.length > 0 ? `<ul>${shown.map((s) => `<li>${escapeHtml(s)}</li>`).join("")}</ul>` : "",
    more > 0 ? `<p>…and ${more} more</p>` : "",
    `<p><a href="${escapeHtml(url)}">Review them</a> (you will be asked to sign in).</p>`,
  ].join("\n");
  return { subject, text, html };
}

/** Webhook formats an admin can register. */
export type WebhookFormat = "slack" | "teams" | "json";

/** The webhook body for `format`. */
export function webhookMessage(
  format: WebhookFormat,
  batch: WaitingBatch,
  publicUrl: string,
): Record<string, unknown> {
  if (format === "slack") return slackMessage(batch, publicUrl);
  if (format === "teams") return teamsMessage(batch, publicUrl);
  return jsonMessage(batch, publicUrl);
}
