import nodemailer from "nodemailer";
import type { WaitingBatch } from "./batch.js";
import type { NotifyConfig } from "./config.js";
import { emailMessage, webhookMessage } from "./messages.js";

/**
 * Posts the batch to the registered webhook `name` in its format. Resolves when the receiver answers 2xx;
 * rejects with an Error naming the webhook (never its URL, which may hold a secret) when the name is not
 * registered, the receiver answers otherwise, or the timeout passes.
 */
export async function postWebhook(name: string, batch: WaitingBatch, config: NotifyConfig): Promise<void> {
  const hook = config.webhooks[name];
  if (!hook) throw new Error(`webhook ${name}: no webhook of that name is registered`);
  const res = await fetch(hook.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(webhookMessage(hook.format, batch, config.publicUrl)),
    signal: AbortSignal.timeout(config.timeoutMs),
  }).catch((err: Error) => {
    throw new Error(`webhook ${name}: ${err.name === "TimeoutError" ? "timed out" : "could not connect"}`);
  });
  await res.arrayBuffer().catch(() => undefined);
  if (!res.ok) throw new Error(`webhook ${name}: receiver answered ${res.status}`);
}

/**
 * Sends the batch's email to `to` over the configured SMTP server.
 * Rejects when email is not configured, the server refuses, or the timeout passes.
 */
export async function sendEmail(to: string[], batch: WaitingBatch, config: NotifyConfig): Promise<void> {
  if (!config.smtpUrl || !config.from)
    throw new Error("email is not configured (no SMTP URL or from address)");
  if (to.length === 0) return;
  const url = new URL(config.smtpUrl);
  const transport = nodemailer.createTransport({
    host: url.hostname,
    port: Number(url.port),
    secure: url.protocol === "smtps:",
    auth: config.smtpAuth,
    connectionTimeout: config.timeoutMs,
    greetingTimeout: config.timeoutMs,
    socketTimeout: config.timeoutMs,
    // Local test servers speak plain SMTP; STARTTLS is used whenever the server offers it.
    ignoreTLS: false,
  });
  try {
    const mail = emailMessage(batch, config.publicUrl);
    await transport.sendMail({
      from: config.from,
      to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
    });
  } finally {
    transport.close();
  }
}
