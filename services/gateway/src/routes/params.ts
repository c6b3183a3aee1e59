/** Path and query parameters shared by the routes, validated with zod (errors name the parameter). */
import { z } from "zod";

/** A workspace id as the kernel mints them (letters, digits, "_" and "-"). */
export const WorkspaceParam = z.object({
  ws: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "a workspace id has 1-64 letters, digits, '_' or '-'"),
});

/** A workspace id and an action id (a positive whole number in decimal: a log id). */
export const ActionParams = WorkspaceParam.extend({
  id: z
    .string()
    .regex(/^[1-9][0-9]{0,14}$/, "an action id is a positive whole number in decimal, e.g. 12")
    .transform(Number),
});

/** A workspace id and a binding name (as listed by GET bindings, e.g. MEMORY). */
export const BindingParams = WorkspaceParam.extend({
  binding: z
    .string()
    .regex(
      /^[A-Za-z][A-Za-z0-9_]{0,62}$/,
      "a binding name has letters, digits and '_' and starts with a letter, e.g. MEMORY",
    ),
});

/** `?until=<revision>` of the log route (a stream revision in decimal), or a page: `?limit=<n>[&after=<log id>]`. */
export const LogQuery = z.object({
  until: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,14})$/, "a stream revision: a whole number, 0 or more")
    .transform(Number)
    .optional(),
  after: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,14})$/, "a log id: a whole number, 0 or more")
    .transform(Number)
    .optional(),
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,3}$/, "a page size: a whole number from 1 to 5000")
    .transform(Number)
    .refine((n) => n <= 5000, "a page size: a whole number from 1 to 5000")
    .optional(),
});

/** `?workspace=<id>` of the inbox route. */
export const InboxQuery = z.object({
  workspace: WorkspaceParam.shape.ws.optional(),
});
