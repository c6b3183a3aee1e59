/**
 * Redacts the password of a store URL for messages and logs: `postgres://app:secret@db/x` →
 * `postgres://app:***@db/x`. A string that is not a URL comes back unchanged (a file path has no password).
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = "***";
    return parsed.toString();
  } catch {
    return url;
  }
}
