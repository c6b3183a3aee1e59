/**
 * The signed-in person's notification preferences: GET and PUT /api/me/notifications. Each person
 * reads and sets only their own (the person comes from the token, never from the body); the kernel
 * keeps them in the person's stream and checks webhook names against the administrator's registry.
 */
import {
  NotificationPreferencesBody,
  type NotificationPreferencesResponse,
} from "@gatehouse/gateway-contract";
import type { NotificationPreferences } from "@gatehouse/proto";
import type { FastifyInstance } from "fastify";
import { personIdOf } from "../auth/membership.ts";
import type { Backends } from "../backends.ts";

function toResponse(p: NotificationPreferences): NotificationPreferencesResponse {
  return {
    person: p.person,
    email: p.email,
    scopes: p.scopes.map((s) => ({ workspace: s.workspace, email: s.email, webhooks: s.webhooks })),
    emailAvailable: p.emailAvailable,
    webhooksAvailable: p.webhooksAvailable,
  };
}

/** Registers GET and PUT /api/me/notifications. */
export function notificationRoutes(app: FastifyInstance, backends: Backends): void {
  app.get(
    "/api/me/notifications",
    async (req): Promise<NotificationPreferencesResponse> =>
      toResponse(
        await backends.kernelCall(backends.kernel.getNotificationPreferences, {
          person: personIdOf(req.person),
        }),
      ),
  );

  app.put("/api/me/notifications", async (req): Promise<NotificationPreferencesResponse> => {
    const body = NotificationPreferencesBody.parse(req.body ?? {});
    return toResponse(
      await backends.kernelCall(backends.kernel.setNotificationPreferences, {
        person: personIdOf(req.person),
        email: body.email,
        scopes: body.scopes,
      }),
    );
  });
}
