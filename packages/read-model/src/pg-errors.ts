/** Mapping PostgreSQL driver failures to the event store's StoreUnavailable. */
import { redactUrl, StoreUnavailable } from "@gatehouse/event-store";

/**
 * True for a driver error that means the server is unreachable or went away: a socket error code,
 * SQLSTATE class 08 or 57P01-57P03, or the driver's codeless "Connection terminated"/timeout errors.
 */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string")
    return (
      /^(08|57P0[123])/.test(code) ||
      /^E(CONNREFUSED|CONNRESET|NOTFOUND|TIMEDOUT|PIPE|HOSTUNREACH|AI_AGAIN)$/.test(code)
    );
  return /connection|terminated|timeout|not queryable/i.test((error as Error).message ?? "");
}

/** `error` as StoreUnavailable naming the read model's URL (password redacted) when it is a connection failure, else unchanged. */
export function mapPgError(error: unknown, url: string): unknown {
  if (error instanceof StoreUnavailable || !isConnectionError(error)) return error;
  return new StoreUnavailable(
    `the read-model database at ${redactUrl(url)} is unavailable: ${(error as Error).message}`,
  );
}
