import { z } from "zod";

/**
 * One person's notification choices for one scope: `workspace` is a workspace id, or "*" for every
 * workspace the person can review. A workspace-specific entry overrides the "*" entry.
 */
export const NotificationPreferenceSchema = z.object({
  workspace: z.string().min(1, "workspace must be a workspace id or * for all"),
  /** Email on or off for this scope. */
  email: z.boolean(),
  /** Names from the admin's webhook registry; never URLs. */
  webhooks: z.array(z.string().min(1)).max(20, "at most 20 webhooks per scope"),
});
/** A person's choices for one scope. */
export type NotificationPreference = z.infer<typeof NotificationPreferenceSchema>;

/** Everything one person chose: their address (if any) and per-scope entries. */
export const PersonPreferencesSchema = z.object({
  email: z.email({ error: "email must be an email address" }).optional(),
  scopes: z.array(NotificationPreferenceSchema).max(200),
});
/** A person's notification preferences. */
export type PersonPreferences = z.infer<typeof PersonPreferencesSchema>;

/** Where one person wants to hear about a batch in `workspace`: an address or none, and webhook names. */
export interface Delivery {
  email?: string;
  webhooks: string[];
}

/**
 * What `prefs` asks for in `workspace`: the workspace's own entry, else the "*" entry, else nothing.
 * Webhook names not in `registered` are dropped (an admin may have removed them since).
 */
export function deliveryFor(
  prefs: PersonPreferences,
  workspace: string,
  registered: ReadonlySet<string>,
): Delivery {
  const scope =
    prefs.scopes.find((s) => s.workspace === workspace) ?? prefs.scopes.find((s) => s.workspace === "*");
  if (!scope) return { webhooks: [] };
  return {
    ...(scope.email && prefs.email ? { email: prefs.email } : {}),
    webhooks: scope.webhooks.filter((w) => registered.has(w)),
  };
}
