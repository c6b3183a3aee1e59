/**
 * What happened to an apply, in the three cases an approver and an auditor may rely on. This is
 * the one place the taxonomy is written down; every gatekeeper maps its transport's errors to it
 * and the kit's apply handlers (`applyStreamHandler`, `applyRunHandler`) turn it into the apply
 * protocol (gatekeeper.proto ApplyAction / ApplyActions), which the lifecycle worker records:
 *
 * - **not sent**: the request provably never reached the system (connection refused, host name not
 *   found, no route, TLS handshake refused, connect timeout, a local check). Recorded "failed":
 *   nothing happened. The gatekeeper throws `NotSent` (or a refusal error before any external call).
 * - **sent, answer lost**: the request may have reached the system and no answer came (the
 *   connection closed or was reset after sending, the answer timed out, the stream was cut, the
 *   server process died). Recorded "outcome unknown" and never sent again. The gatekeeper throws
 *   `AnswerLost` (any error whose status is not a refusal counts the same).
 * - **answered**: the system answered. Recorded "applied" (`{ok: true}`) or "failed" with the
 *   system's own error (`{ok: false, error}`).
 *
 * The rule that decides between the first two: an error is "not sent" only when it PROVES the
 * request never left (the codes in `NOT_SENT_CODES`); anything else after the external call began
 * is "answer lost", because a write that happened must never be recorded as failed (someone would
 * apply it again). `classifyTransportError` applies that rule to Node's and undici's error codes;
 * a gatekeeper whose transport reports text (git's stderr, pg's messages) maps its own texts to a
 * `TransportFault` and uses the same message builder (`faultMessage`).
 */
import { GatekeeperError } from "./errors.ts";

/** Why a connection to an external system did not carry the request to its answer. */
export type TransportCause =
  /** Nothing listens at the address (ECONNREFUSED). */
  | "refused"
  /** The host name does not resolve (ENOTFOUND, EAI_AGAIN). */
  | "dns"
  /** No route to the host or network (ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL). */
  | "unreachable"
  /** The TLS handshake failed (certificate, protocol) before any request was written. */
  | "tls"
  /** The connection could not be opened in time (UND_ERR_CONNECT_TIMEOUT). */
  | "connect-timeout"
  /** The request was sent and no answer came in time. */
  | "timeout"
  /** The connection closed or was reset after the request may have been written. */
  | "closed"
  /** Anything else: treated as possibly sent. */
  | "other";

/** A transport failure of an external call, classified. */
export interface TransportFault {
  /** False only when the request provably never reached the system. */
  sent: boolean;
  cause: TransportCause;
  /** A short technical detail safe to show (an error code such as "ECONNRESET"), or "". */
  detail: string;
}

/**
 * Error codes that prove the request was never written: they can only happen while the
 * connection is being opened (DNS, TCP connect, TLS handshake), before a request exists on the wire.
 */
const NOT_SENT_CODES: Readonly<Record<string, TransportCause>> = {
  ECONNREFUSED: "refused",
  ENOTFOUND: "dns",
  EAI_AGAIN: "dns",
  EAI_NONAME: "dns",
  EAI_FAIL: "dns",
  ENETUNREACH: "unreachable",
  EHOSTUNREACH: "unreachable",
  EADDRNOTAVAIL: "unreachable",
  UND_ERR_CONNECT_TIMEOUT: "connect-timeout",
  CERT_HAS_EXPIRED: "tls",
  CERT_NOT_YET_VALID: "tls",
  DEPTH_ZERO_SELF_SIGNED_CERT: "tls",
  SELF_SIGNED_CERT_IN_CHAIN: "tls",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "tls",
  UNABLE_TO_GET_ISSUER_CERT: "tls",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "tls",
  ERR_TLS_CERT_ALTNAME_INVALID: "tls",
  HOSTNAME_MISMATCH: "tls",
};

/** Codes that mean the request may have been written and its answer was lost. */
const LOST_CODES: Readonly<Record<string, TransportCause>> = {
  ECONNRESET: "closed",
  EPIPE: "closed",
  ECONNABORTED: "closed",
  UND_ERR_SOCKET: "closed",
  UND_ERR_CLOSED: "closed",
  ERR_STREAM_PREMATURE_CLOSE: "closed",
  ETIMEDOUT: "timeout",
  UND_ERR_HEADERS_TIMEOUT: "timeout",
  UND_ERR_BODY_TIMEOUT: "timeout",
  ABORT_ERR: "timeout",
};

/** Each error of `err`'s cause chain (and an AggregateError's members), outermost first, at most 8. */
function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  const queue: unknown[] = [err];
  while (queue.length > 0 && out.length < 8) {
    const e = queue.shift();
    if (e === undefined || e === null || out.includes(e)) continue;
    out.push(e);
    if (typeof e === "object") {
      const o = e as { cause?: unknown; errors?: unknown };
      if (o.cause !== undefined) queue.push(o.cause);
      if (Array.isArray(o.errors)) queue.push(...o.errors);
    }
  }
  return out;
}

/** The `code` of an error-like value, or "". */
function codeOf(e: unknown): string {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === "string" ? c : "";
}

/**
 * Classifies an error thrown by a Node network call (net, tls, http, fetch/undici), looking
 * through `cause` chains and AggregateError members (fetch's "fetch failed" holds the real error
 * in `cause`; a host with several addresses fails with an AggregateError).
 *
 * `sent` is false only when every error code found proves the connection was never opened
 * (`NOT_SENT_CODES`); a TLS error that is not a certificate or handshake code, a reset, a close, a
 * timeout, or an error with no known code is `sent: true`. An AbortError/TimeoutError (an
 * AbortSignal that fired while waiting) is a timeout, sent.
 */
export function classifyTransportError(err: unknown): TransportFault {
  const errors = chain(err);
  const codes = errors.map(codeOf).filter((c) => c !== "");
  for (const code of codes) {
    const lost = LOST_CODES[code];
    if (lost) return { sent: true, cause: lost, detail: code };
  }
  for (const e of errors) {
    const name = (e as { name?: unknown } | null)?.name;
    if (name === "AbortError" || name === "TimeoutError")
      return { sent: true, cause: "timeout", detail: name };
  }
  const known = codes.filter((c) => NOT_SENT_CODES[c] !== undefined || /^ERR_(SSL|TLS)_/.test(c));
  if (known.length > 0 && known.length === codes.length) {
    const code = known[0]!;
    return { sent: false, cause: NOT_SENT_CODES[code] ?? "tls", detail: code };
  }
  return { sent: true, cause: "other", detail: codes[0] ?? "" };
}

/**
 * The endpoint as it may be shown: the origin of a URL (scheme, host, port), never its user,
 * password, path or query; a non-URL (a stdio command name, "remote origin") is kept, cut to 120
 * characters.
 */
export function endpointOrigin(endpoint: string): string {
  try {
    const u = new URL(endpoint);
    if (u.host !== "") return `${u.protocol}//${u.host}`;
    return `${u.protocol}`;
  } catch {
    return endpoint.slice(0, 120);
  }
}

/** What a cause means and what to check, per cause. */
const CAUSE_TEXT: Readonly<Record<TransportCause, { what: string; check: string }>> = {
  refused: {
    what: "connection refused (nothing is listening there)",
    check: "check that the server is running and that the host and port are right",
  },
  dns: {
    what: "the host name does not resolve",
    check: "check the host name and this machine's DNS",
  },
  unreachable: {
    what: "no route to the host",
    check: "check the address and the network path (firewall, NetworkPolicy) from the gatekeeper",
  },
  tls: {
    what: "the TLS handshake failed",
    check: "check the server's certificate (name, expiry, issuer) and the CAs the gatekeeper trusts",
  },
  "connect-timeout": {
    what: "the connection could not be opened in time",
    check: "check that the host is up and reachable from the gatekeeper",
  },
  timeout: {
    what: "no answer came in time",
    check: "check on the system whether the request took effect before doing it again",
  },
  closed: {
    what: "the connection closed before the answer came",
    check: "check on the system whether the request took effect before doing it again",
  },
  other: {
    what: "the call broke",
    check: "check on the system whether the request took effect before doing it again",
  },
};

/**
 * The message for a transport fault, naming the endpoint (origin only), the cause and what to
 * check, and for a sent request that its outcome is unknown. E.g.
 * `calling create_file at http://127.0.0.1:4000 was not sent: connection refused (nothing is
 * listening there) [ECONNREFUSED]; check that the server is running and that the host and port are right`.
 * @param what the call, e.g. "calling create_file", "pushing to main".
 */
export function faultMessage(what: string, endpoint: string, fault: TransportFault): string {
  const at = endpointOrigin(endpoint);
  const t = CAUSE_TEXT[fault.cause];
  const detail = fault.detail ? ` [${fault.detail}]` : "";
  return fault.sent
    ? `${what} at ${at}: ${t.what}${detail}; the request may have reached the system, so the outcome is unknown: ${t.check}`
    : `${what} at ${at} was not sent: ${t.what}${detail}; ${t.check}`;
}

/**
 * "Not sent": the request provably never reached the external system (see the table above).
 * Thrown from an apply function, the kit's apply handlers turn it into the outcome
 * `{ok: false, error: message}`, so it is recorded "failed". Its status elsewhere is
 * FAILED_PRECONDITION.
 */
export class NotSent extends GatekeeperError {
  override name = "NotSent";
  readonly code = "failed_precondition" as const;
}

/**
 * "Sent, answer lost": the request may have reached the system and no answer came. Thrown from an
 * apply function, it ends the apply stream with UNAVAILABLE, which the caller records as outcome
 * unknown (never applied again). The message says the outcome is unknown.
 */
export class AnswerLost extends GatekeeperError {
  override name = "AnswerLost";
  readonly code = "unavailable" as const;
}

/**
 * The error to throw for a transport failure of an apply's external call: `NotSent` when `fault`
 * proves nothing was sent, else `AnswerLost`; the message is `faultMessage(what, endpoint, fault)`.
 */
export function applyFault(what: string, endpoint: string, fault: TransportFault): NotSent | AnswerLost {
  const message = faultMessage(what, endpoint, fault);
  return fault.sent ? new AnswerLost(message) : new NotSent(message);
}
