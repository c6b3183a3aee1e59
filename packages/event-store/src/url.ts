/** Query keys that carry a secret in libpq URLs (`?password=…`, `?sslpassword=…`). */
const SECRET_KEYS = /^(ssl)?password$/i;

/**
 * Redacts the password of a store URL for messages and logs: `postgres://app:secret@db/x` →
 * `postgres://app:***@db/x`, and `?password=secret` (libpq accepts the password as a query
 * parameter too) → `?password=***`. A string that the URL parser refuses but that still has a
 * `scheme://user:password@` part (a KurrentDB cluster string `kurrentdb://u:pw@n1:2113,n2:2113`) or a
 * `password=` parameter has those redacted too; a string without one comes back unchanged (a file
 * path has no password).
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const secretKeys = [...parsed.searchParams.keys()].filter((k) => SECRET_KEYS.test(k));
    if (!parsed.password && secretKeys.length === 0) return url;
    if (parsed.password) parsed.password = "***";
    for (const k of secretKeys) parsed.searchParams.set(k, "***");
    // searchParams.set percent-encodes "*": keep the marker readable.
    return parsed.toString().replace(/%2A%2A%2A/g, "***");
  } catch {
    return url
      .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*):[^@/?#]*@/i, "$1:***@")
      .replace(/([?&](?:ssl)?password=)[^&#]*/gi, "$1***");
  }
}
