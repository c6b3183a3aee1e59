/**
 * The signed-in person's notification preferences: when a turn of an agent leaves writes waiting for
 * review in a workspace they reach, Gatehouse can tell them once per turn by email and/or by posting to
 * webhooks an administrator registered (Slack, Teams, JSON), with a link to the turn's review page. The
 * link never approves anything: the page asks them to sign in.
 */
import { z } from "zod";

/** One scope: a workspace id, or "*" for every workspace the person reaches (a workspace's own entry wins). */
export const NotificationScope = z
  .object(
    {
      workspace: z
        .string({ error: 'workspace is a workspace id or "*" for all of them' })
        .trim()
        .min(1, 'workspace must be a workspace id or "*" for all of them')
        .max(200, "a workspace id is at most 200 characters"),
      email: z.boolean({ error: "email is true or false" }),
      webhooks: z
        .array(
          z.string().min(1, "a webhook name is not empty").max(64, "a webhook name is at most 64 characters"),
          {
            error: 'webhooks is a list of registered webhook names, e.g. ["payments-slack"]',
          },
        )
        .max(20, "at most 20 webhooks per scope")
        .default([]),
    },
    { error: 'each scope is an object, e.g. {"workspace": "*", "email": true, "webhooks": []}' },
  )
  .strict();
export type NotificationScope = z.output<typeof NotificationScope>;

/**
 * PUT /api/me/notifications — replaces the person's preferences; answers
 * {@link NotificationPreferencesResponse}. 400 naming the field for a bad address, email on without
 * an address, a scope listed twice, or a webhook name the administrator did not register.
 */
export const NotificationPreferencesBody = z
  .object(
    {
      /** Where emails go; "" or absent: no email. */
      email: z
        .union([z.literal(""), z.email({ error: "email must be an email address, e.g. ana@example.com" })])
        .default(""),
      scopes: z
        .array(NotificationScope, { error: "scopes is a list of {workspace, email, webhooks}" })
        .max(200, "at most 200 scopes"),
    },
    {
      error:
        'send a JSON object, e.g. {"email": "ana@example.com", "scopes": [{"workspace": "*", "email": true, "webhooks": []}]}',
    },
  )
  .strict();
export type NotificationPreferencesBody = z.input<typeof NotificationPreferencesBody>;

/** GET /api/me/notifications (and PUT's answer): the person's preferences and what can be sent. */
export interface NotificationPreferencesResponse {
  /** "user:<subject>". */
  person: string;
  /** "" when none is set. */
  email: string;
  scopes: NotificationScope[];
  /** Whether email is configured on this installation (without it, email choices are kept but unused). */
  emailAvailable: boolean;
  /** Names of the webhooks an administrator registered: the only names `webhooks` may hold. */
  webhooksAvailable: string[];
}
