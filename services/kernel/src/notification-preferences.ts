/**
 * Per-person notification preferences (kernel.proto `Get/SetNotificationPreferences`): each person's
 * choices live in their own stream `person-<subject>` as NotificationPreferencesSet events; the last
 * one is in force. The kernel records; its callers decide who may set (the gateway: the signed-in
 * person, for themselves). Validated with @gatehouse/notify's schema, and webhook names against the
 * administrator's registry, so the notifier never meets a choice it cannot honour.
 */
import { type EventStore, StreamNotFound } from "@gatehouse/event-store";
import { type NotifyConfig, type PersonPreferences, PersonPreferencesSchema } from "@gatehouse/notify";
import {
  type NotificationPreferences,
  NotificationPreferencesSet,
  type SetNotificationPreferencesRequest,
} from "@gatehouse/proto";
import { InvalidArgument } from "./domain/errors.ts";
import { checkPerson } from "./domain/membership.ts";

/** The stream of one person's own records: `person-<subject>` for "user:<subject>". */
export function personStream(person: string): string {
  return `person-${person.slice("user:".length)}`;
}

/**
 * The preferences in force for `person` ("user:<subject>"): the last NotificationPreferencesSet of
 * their stream, or none chosen (no email, no webhooks) when they never set any.
 */
export async function preferencesOf(store: EventStore, person: string): Promise<PersonPreferences> {
  const last = await store
    .readStream(personStream(person), { direction: "backwards", maxCount: 50 })
    .catch((err: unknown) => {
      if (err instanceof StreamNotFound) return [];
      throw err;
    });
  const set = last.find((e) => e.type === "NotificationPreferencesSet");
  if (!set) return { scopes: [] };
  const p = NotificationPreferencesSet.fromJSON(set.data);
  return {
    ...(p.email ? { email: p.email } : {}),
    scopes: p.scopes.map((s) => ({ workspace: s.workspace, email: s.email, webhooks: [...s.webhooks] })),
  };
}

/** What GetNotificationPreferences answers: the preferences and what this kernel can send. */
export function preferencesView(
  person: string,
  prefs: PersonPreferences,
  config: NotifyConfig | undefined,
): NotificationPreferences {
  return {
    person,
    email: prefs.email ?? "",
    scopes: prefs.scopes.map((s) => ({ workspace: s.workspace, email: s.email, webhooks: s.webhooks })),
    emailAvailable: Boolean(config?.smtpUrl),
    webhooksAvailable: Object.keys(config?.webhooks ?? {}).sort(),
  };
}

/**
 * Checks and records a person's preferences (appends NotificationPreferencesSet to their stream).
 * @throws InvalidArgument naming the field: person not "user:<subject>", a bad address, email on in a
 *   scope without an address, a scope listed twice, a webhook name not in the registry, too many scopes.
 */
export async function setPreferences(
  store: EventStore,
  req: SetNotificationPreferencesRequest,
  config: NotifyConfig | undefined,
): Promise<NotificationPreferences> {
  checkPerson("person", req.person);
  const parsed = PersonPreferencesSchema.safeParse({
    ...(req.email ? { email: req.email } : {}),
    scopes: req.scopes.map((s) => ({ workspace: s.workspace, email: s.email, webhooks: s.webhooks })),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidArgument(`${issue?.path.join(".") || "preferences"}: ${issue?.message}`);
  }
  const prefs = parsed.data;
  const registered = new Set(Object.keys(config?.webhooks ?? {}));
  const seen = new Set<string>();
  prefs.scopes.forEach((s, i) => {
    if (seen.has(s.workspace))
      throw new InvalidArgument(`scopes.${i}.workspace: "${s.workspace}" is listed twice; keep one entry`);
    seen.add(s.workspace);
    if (s.email && !prefs.email)
      throw new InvalidArgument(`scopes.${i}.email: email is on but no address is set; set email`);
    for (const w of s.webhooks) {
      if (!registered.has(w)) {
        const known = [...registered].sort().join(", ") || "none are registered";
        throw new InvalidArgument(
          `scopes.${i}.webhooks: "${w.slice(0, 64)}" is not a registered webhook (registered: ${known}); an administrator registers webhooks`,
        );
      }
    }
  });
  await store.append(
    personStream(req.person),
    [
      {
        type: "NotificationPreferencesSet",
        data: NotificationPreferencesSet.toJSON({
          person: req.person,
          email: prefs.email ?? "",
          scopes: prefs.scopes,
        }),
        metadata: { actor: req.person },
      },
    ],
    "any",
  );
  return preferencesView(req.person, prefs, config);
}
