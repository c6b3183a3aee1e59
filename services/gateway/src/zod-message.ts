import type { ZodError } from "zod";

/**
 * The 400 message of a request that failed its zod schema: each issue as `path: message`, joined by
 * "; ". An unknown field (a `.strict()` object's `unrecognized_keys` issue) is named, since a schema's
 * own error text ("send a JSON object, e.g. …") replaces zod's and would not say which field was wrong.
 */
export function zodErrorMessage(err: ZodError): string {
  return err.issues
    .map((i) => {
      const message =
        i.code === "unrecognized_keys"
          ? `unknown field${i.keys.length > 1 ? "s" : ""} ${i.keys.map((k) => JSON.stringify(k)).join(", ")}; ${i.message}`
          : i.message;
      return i.path.length ? `${i.path.join(".")}: ${message}` : message;
    })
    .join("; ");
}
