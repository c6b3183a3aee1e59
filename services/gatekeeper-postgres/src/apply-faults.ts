/**
 * An apply's PostgreSQL transport failures mapped to the apply outcome taxonomy (the kit's
 * apply-outcome.ts), by how far the apply transaction got (db.ts `TxPhase`):
 *
 * - **connect** (the pool could not open or log in: refused, host not found, no route, TLS, login
 *   refused, connect timeout): no statement of the write was sent → `NotSent`, recorded "failed".
 * - **statements** (BEGIN, the write's statements, the marker insert): an error the server answered
 *   (a SQLSTATE) rolls the transaction back → "failed" with the server's error (apply.ts); the
 *   connection breaking, or the apply's deadline destroying it, before COMMIT was sent →
 *   `NotApplied`, recorded "failed": PostgreSQL rolls back a transaction whose connection ends
 *   without COMMIT, and COMMIT was never written to that connection, so the write cannot have
 *   committed (a statement still running on the server is rolled back when it notices).
 * - **commit** (COMMIT handed to the connection): an error the server answered (a deferred
 *   constraint, a serialization failure) means it rolled back → "failed"; the connection breaking
 *   or the deadline passing before the answer → the commit may have happened → `AnswerLost`,
 *   recorded "outcome unknown" (apply.ts first looks for the action's marker row on a new
 *   connection: found, the write committed and the apply reports applied).
 *
 * Messages name the endpoint as `postgres://host:port` only, never the role, password or database.
 */
import {
  AnswerLost,
  classifyTransportError,
  faultMessage,
  NotSent,
  type TransportFault,
} from "@gatehouse/gatekeeper-kit";
import type { TxFailure } from "./db.ts";
import { NotApplied } from "./errors.ts";
import type { ServerConfig } from "./registry.ts";

/** `postgres://host:port` of a registered server (an IPv6 address in brackets). */
export function serverOrigin(server: Pick<ServerConfig, "host" | "port">): string {
  const host = server.host.includes(":") ? `[${server.host}]` : server.host;
  return `postgres://${host}:${server.port}`;
}

const CHECK_ROLE =
  "check the write role and its password in the gatekeeper's registry and the server's pg_hba.conf";

/**
 * SQLSTATEs a server answers a login with: what they mean and what to check (the server's own
 * message names the role or the database, so it is not shown).
 */
const LOGIN_REFUSED: Readonly<Record<string, { why: string; check: string }>> = {
  "28P01": { why: "password authentication failed", check: CHECK_ROLE },
  "28000": { why: "the server does not accept this role from the gatekeeper's address", check: CHECK_ROLE },
  "42501": { why: "the role may not log in to the database", check: CHECK_ROLE },
  "3D000": {
    why: "the database does not exist",
    check: "check the server's databases in the gatekeeper's registry against the server",
  },
  "53300": {
    why: "the server has too many connections",
    check: "check the server's max_connections and its clients",
  },
  "57P03": {
    why: "the server is starting up or shutting down",
    check: "check the server's state and try later",
  },
};

/** True for errors that mean the connection could not be opened in time (pg, pg-pool, db.ts). */
function isConnectTimeout(raw: unknown): boolean {
  const e = raw as { name?: string; message?: string } | null;
  return (
    e?.name === "DeadlinePassed" ||
    /timeout exceeded when trying to connect|connection timeout/i.test(e?.message ?? "")
  );
}

/** The SQLSTATE of a server's error (five characters), or "". */
function sqlState(raw: unknown): string {
  const code = (raw as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !/^E[A-Z]+$/.test(code) ? code : "";
}

/**
 * The error for a failure before the write's transaction began (opening the connection, or
 * checking the marker table; `raw` from the pool or the driver): always `NotSent`, as no
 * statement of the write had been sent. The message names `origin`, the cause and what
 * to check. @param what the call, e.g. "applying action 12".
 */
export function connectFault(what: string, origin: string, raw: unknown): NotSent {
  const state = sqlState(raw);
  if (state !== "") {
    const t = LOGIN_REFUSED[state] ?? { why: "the server refused the connection", check: CHECK_ROLE };
    return new NotSent(
      `${what} at ${origin} was not sent: the server refused the login: ${t.why} [${state}]; ${t.check}`,
    );
  }
  const fault: TransportFault = isConnectTimeout(raw)
    ? { sent: false, cause: "connect-timeout", detail: "" }
    : classifyTransportError(raw);
  if (!fault.sent) return new NotSent(faultMessage(what, origin, fault));
  const detail = fault.detail || (raw as Error | null)?.message || "";
  return new NotSent(
    `${what} at ${origin} was not sent: the connection closed before the write was sent${detail ? ` [${detail}]` : ""}; check that the server is running and accepts connections from the gatekeeper`,
  );
}

/** The short cause of a broken connection: the error code, or the driver's message. */
function brokenDetail(f: TxFailure): string {
  const raw = f.raw as { code?: unknown; message?: unknown } | null;
  if (typeof raw?.code === "string" && raw.code !== "") return raw.code;
  return typeof raw?.message === "string" ? raw.message.slice(0, 120) : "connection lost";
}

/**
 * The error for a connection that broke (or was destroyed at the deadline) before COMMIT was sent:
 * `NotApplied` (recorded "failed"), saying why nothing was changed.
 */
export function beforeCommitFault(what: string, origin: string, f: TxFailure): NotApplied {
  const cause = f.timedOut
    ? "no answer came before the apply's deadline, so the gatekeeper closed the connection"
    : "the connection broke";
  return new NotApplied(
    `${what} at ${origin} failed: ${cause} before COMMIT was sent${f.timedOut ? "" : ` [${brokenDetail(f)}]`}; PostgreSQL rolls back a transaction whose connection ends without COMMIT, so nothing was changed; check that the server is up and reachable from the gatekeeper`,
  );
}

/**
 * The error for a connection that broke (or was destroyed at the deadline) after COMMIT was sent
 * and before its answer: `AnswerLost` (recorded "outcome unknown"); the message says to look for
 * the marker row before doing it again.
 */
export function commitLostFault(
  what: string,
  origin: string,
  f: TxFailure,
  marker: { workspaceId: string; actionId: number },
): AnswerLost {
  const fault: TransportFault = {
    sent: true,
    cause: f.timedOut ? "timeout" : "closed",
    detail: f.timedOut ? "" : brokenDetail(f),
  };
  return new AnswerLost(
    `${faultMessage(what, origin, fault)} (the write committed if gatehouse.applied_actions has the row workspace_id '${marker.workspaceId}', action_id ${marker.actionId})`,
  );
}
