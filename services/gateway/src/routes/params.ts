/** Path and query parameters shared by the routes, validated with zod (errors name the parameter). */
import { z } from "zod";

/** A workspace id as the kernel mints them (letters, digits, "_" and "-"). */
export const WorkspaceParam = z.object({
  ws: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "a workspace id has 1-64 letters, digits, '_' or '-'"),
});

/** A workspace id and an action id (a positive integer log id). */
export const ActionParams = WorkspaceParam.extend({
  id: z.coerce.number().int("an action id is a whole number").positive("an action id is positive"),
});

/** `?until=<revision>` of the log route. */
export const LogQuery = z.object({
  until: z.coerce
    .number()
    .int("until is a stream revision (a whole number)")
    .min(0, "until is 0 or more")
    .optional(),
});

/** `?workspace=<id>` of the inbox route. */
export const InboxQuery = z.object({
  workspace: WorkspaceParam.shape.ws.optional(),
});
