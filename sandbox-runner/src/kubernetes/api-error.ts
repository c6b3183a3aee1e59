/**
 * The API server's own words for a failed request: the `message` of the Status body an ApiException
 * carries (e.g. `pods "x" is forbidden: exceeded quota: …`, `pod rejected: RuntimeClass "x" not found`),
 * prefixed with the HTTP code; for other errors (connection refused, TLS) their message.
 */
export function apiErrorMessage(error: unknown): string {
  const e = error as { code?: unknown; body?: unknown; message?: unknown };
  if (typeof e?.code === "number" && e.body !== undefined) {
    let body: unknown = e.body;
    if (typeof body === "string") {
      const text = body;
      try {
        body = JSON.parse(text);
      } catch {
        return `HTTP ${e.code}: ${text.slice(0, 500)}`;
      }
    }
    const message = (body as { message?: unknown })?.message;
    if (typeof message === "string") return `HTTP ${e.code}: ${message}`;
    return `HTTP ${e.code}`;
  }
  return typeof e?.message === "string" ? e.message : String(error);
}

/** The HTTP status of an ApiException, or null for other errors. */
export function apiErrorCode(error: unknown): number | null {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "number" ? code : null;
}
