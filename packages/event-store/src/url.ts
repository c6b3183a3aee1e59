/**
 * Redacts the password of a store URL for messages and logs: `postgres://app:secret@db/x` →
 * `postgres://app:***@db/x`. A string that the URL parser refuses but that still has a
 * `scheme://user:password@` part (a KurrentDB cluster string `kurrentdb://u:pw@n1:2113,n2:2113`) has that
 * password redacted too; a string without one comes back unchanged (a file path has no password).
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = "***";
    return parsed.toString();
  } catch {
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*):[^@/?#]*@/i, "$1:***@");
  }
}
