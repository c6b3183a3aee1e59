import type { WaitingBatch } from "./batch.js";
import type { NotifyConfig } from "./config.js";
import { deliveryFor, type PersonPreferences } from "./preferences.js";
import { postWebhook, sendEmail } from "./send.js";

/** The logging a dispatcher needs (pino's `info`/`warn` fit). Never given addresses' secrets or tokens. */
export interface NotifyLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** What one dispatch did: how many emails and webhook posts went out and which failed (by name). */
export interface DispatchResult {
  emailed: number;
  posted: string[];
  failed: string[];
}

/**
 * Tells the people of a workspace that `batch` waits, each as their preferences ask: one email to all
 * addresses and one post per distinct webhook name (two people subscribed to the same channel make one
 * post). Never rejects: failures are logged (webhook names, never URLs) and returned in `failed`.
 * Sends nothing when the batch has no pending actions.
 */
export async function dispatchWaitingBatch(
  batch: WaitingBatch,
  people: PersonPreferences[],
  config: NotifyConfig,
  log: NotifyLogger,
): Promise<DispatchResult> {
  const result: DispatchResult = { emailed: 0, posted: [], failed: [] };
  if (batch.pending <= 0) return result;
  const registered = new Set(Object.keys(config.webhooks));
  const emails = new Set<string>();
  const hooks = new Set<string>();
  for (const person of people) {
    const d = deliveryFor(person, batch.workspace, registered);
    if (d.email && config.smtpUrl) emails.add(d.email);
    for (const w of d.webhooks) hooks.add(w);
  }
  const jobs: Promise<void>[] = [];
  if (emails.size > 0) {
    jobs.push(
      sendEmail([...emails], batch, config).then(
        () => {
          result.emailed = emails.size;
        },
        (err: Error) => {
          result.failed.push("email");
          log.warn({ workspace: batch.workspace, err: err.message }, "review notification email failed");
        },
      ),
    );
  }
  for (const name of hooks) {
    jobs.push(
      postWebhook(name, batch, config).then(
        () => {
          result.posted.push(name);
        },
        (err: Error) => {
          result.failed.push(name);
          log.warn({ workspace: batch.workspace, err: err.message }, "review notification webhook failed");
        },
      ),
    );
  }
  await Promise.all(jobs);
  log.info(
    {
      workspace: batch.workspace,
      pending: batch.pending,
      emailed: result.emailed,
      posted: result.posted.length,
    },
    "review notification sent",
  );
  return result;
}
