import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

/** One admin-registered webhook: where to post and which body format the receiver expects. */
export const WebhookSchema = z.object({
  url: z.url({ protocol: /^https?$/, error: "webhook url must be an http(s) URL" }),
  format: z.enum(["slack", "teams", "json"], { error: "webhook format must be slack, teams or json" }),
});
/** A registered webhook. */
export type Webhook = z.infer<typeof WebhookSchema>;

/** The webhook registry file: name → {url, format}. Names are what people subscribe to. */
export const WebhookRegistrySchema = z.record(
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "webhook names are 1-64 letters, digits, _ . -"),
  WebhookSchema,
);
/** name → webhook. */
export type WebhookRegistry = z.infer<typeof WebhookRegistrySchema>;

/** Notification settings of a server; `smtpUrl` absent means email is off. */
export const NotifyConfigSchema = z.object({
  smtpUrl: z
    .string()
    .regex(
      /^smtps?:\/\/[^/\s:@]+:\d{1,5}\/?$/,
      "SMTP URL must look like smtp://host:port (auth goes in a file)",
    )
    .optional(),
  smtpAuth: z.object({ user: z.string().min(1), pass: z.string().min(1) }).optional(),
  from: z.email({ error: "the from address must be an email address" }).optional(),
  publicUrl: z.url({ protocol: /^https?$/, error: "the public URL must be http(s)://host[:port][/path]" }),
  webhooks: WebhookRegistrySchema.default({}),
  /** Milliseconds one send may take before it is abandoned. */
  timeoutMs: z.number().int().positive().default(5000),
});
/** Validated notification settings. */
export type NotifyConfig = z.infer<typeof NotifyConfigSchema>;

function readStructured(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`cannot read the ${what} file ${path}: ${(err as Error).message}`);
  }
  try {
    return path.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new Error(
      `the ${what} file ${path} is not valid ${path.endsWith(".json") ? "JSON" : "YAML"}: ${(err as Error).message}`,
    );
  }
}

/** Raw settings as they come from environment variables or flags; files are named by path. */
export interface NotifyConfigInput {
  smtpUrl?: string;
  /** YAML/JSON file with `{user, pass}`; kept out of URLs and logs. */
  smtpAuthFile?: string;
  from?: string;
  publicUrl: string;
  /** YAML/JSON file: name → {url, format}. */
  webhooksFile?: string;
  timeoutMs?: number;
}

/**
 * Validated settings from raw input, reading the auth and registry files.
 * Throws an Error naming the setting that is wrong and what it should look like.
 */
export function loadNotifyConfig(input: NotifyConfigInput): NotifyConfig {
  const raw = {
    smtpUrl: input.smtpUrl || undefined,
    smtpAuth: input.smtpAuthFile ? readStructured(input.smtpAuthFile, "SMTP auth") : undefined,
    from: input.from || undefined,
    publicUrl: input.publicUrl,
    webhooks: input.webhooksFile ? readStructured(input.webhooksFile, "webhook registry") : {},
    timeoutMs: input.timeoutMs,
  };
  const parsed = NotifyConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "config"}: ${i.message}`);
    throw new Error(`invalid notification settings: ${issues.join("; ")}`);
  }
  if (parsed.data.smtpUrl && !parsed.data.from) {
    throw new Error("invalid notification settings: from: an SMTP URL needs a from address");
  }
  return parsed.data;
}
