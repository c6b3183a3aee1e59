/**
 * What a failed git call to a remote tells about an apply, in the kit's apply outcome taxonomy
 * (not sent / sent with the answer lost / answered). git reports transport failures as text on
 * stderr (curl's for https, ssh's for ssh; the gatekeeper runs git with LC_ALL=C), so this file
 * maps those texts to a `TransportFault` and builds messages with the kit's `faultMessage`
 * (the remote's origin only, never its path or credentials).
 *
 * - **not sent**: the connection was never opened (host name not found, connection refused, no
 *   route, connect timeout, TLS handshake or ssh host key refused). Only the texts git prints
 *   while connecting count; a failure of the pack's request (`RPC failed`) never does.
 * - **answered, nothing written**: the remote refused the update (`[rejected]`, `stale info`,
 *   `fetch first`, `non-fast-forward`: the branch moved; `[remote rejected]`: a hook or the server
 *   declined it) or refused the gatekeeper's credentials before the pack was sent. One exception
 *   the callers check: curl resends a request whose connection died without an answer, and the
 *   remote refuses the resend of a push it performed (its ref lock no longer matches); so after
 *   a refusal the remote branch is read, and at the pushed commit the push happened.
 * - **unclear** (everything else: the remote hung up, early EOF, `RPC failed`, our timeout killed
 *   git): the pack may have been received and the ref updated. `settleUnclearPublish` reads the
 *   remote branch (`git ls-remote`): at the pushed commit, the push happened (applied); anywhere
 *   else, or unreadable, the outcome is unknown (`AnswerLost`). A branch still at its old commit
 *   is not proof of failure: a receive-pack the client stopped waiting for may still update it.
 */
import { AnswerLost, faultMessage, type TransportFault } from "@gatehouse/gatekeeper-kit";
import type { GitFailed } from "./git.ts";

/** How a failed remote call ended, as far as its stderr tells. */
export type RemoteFailure =
  /** The remote answered that the branch is not where the lease or a fast-forward needs it. */
  | { kind: "moved" }
  /** The remote answered with a refusal (hook, server, credentials); nothing was written. */
  | { kind: "refused"; why: string }
  /** The connection was never opened: nothing reached the remote. */
  | { kind: "not-sent"; fault: TransportFault }
  /** The request may have reached the remote and its answer was lost. */
  | { kind: "unclear"; fault: TransportFault };

/** Texts git prints while connecting, each proving nothing was sent; first match wins. */
const NOT_SENT_TEXTS: readonly [RegExp, TransportFault["cause"], string][] = [
  [/Could not resolve host|Could not resolve hostname|Name or service not known/, "dns", "host not found"],
  [/Temporary failure in name resolution/, "dns", "host not found"],
  [/Connection refused|Couldn't connect to server/, "refused", "connection refused"],
  [/No route to host|Network is unreachable/, "unreachable", "no route"],
  [
    /Failed to connect to .*(?:Timeout was reached|timed out)|ssh: connect to host .*timed out/,
    "connect-timeout",
    "connect timeout",
  ],
  [
    /SSL certificate problem|server certificate verification failed|SSL: no alternative certificate|SSL_connect|gnutls_handshake|TLS connect error|unable to get local issuer certificate/,
    "tls",
    "TLS handshake",
  ],
  [/Host key verification failed/, "tls", "ssh host key not trusted"],
];

/** Texts of a refusal of the gatekeeper's credentials before any pack was sent. */
const AUTH_REFUSED =
  /Authentication failed|Permission denied \(publickey|The requested URL returned error: 40[13]|could not read Username/;

/** The first stderr line matching `re`, trimmed and bounded, or the first non-empty line. */
function lineOf(stderr: string, re?: RegExp): string {
  const lines = stderr.split("\n").map((l) => l.trim());
  return ((re && lines.find((l) => re.test(l))) ?? lines.find((l) => l !== "") ?? "").slice(0, 300);
}

/** Classifies a failed git call to a remote (push, fetch, ls-remote) by its exit and stderr. */
export function classifyRemoteFailure(e: GitFailed): RemoteFailure {
  const err = e.stderr;
  // The pack's request failed: whatever the text, the pack may have been received.
  const packSent = /RPC failed|hung up|early EOF|unexpected disconnect|sideband|Empty reply/.test(err);
  if (/\[remote rejected\]|hook declined/.test(err)) {
    return { kind: "refused", why: lineOf(err, /^remote: |\[remote rejected\]/) };
  }
  if (/\[rejected\]|stale info|fetch first|non-fast-forward/.test(err)) return { kind: "moved" };
  if (!packSent && e.exitCode !== null) {
    for (const [re, cause, detail] of NOT_SENT_TEXTS) {
      if (re.test(err)) return { kind: "not-sent", fault: { sent: false, cause, detail } };
    }
    if (AUTH_REFUSED.test(err)) return { kind: "refused", why: lineOf(err, AUTH_REFUSED) };
  }
  if (e.exitCode === null || /timed out|Timeout was reached/.test(err)) {
    return { kind: "unclear", fault: { sent: true, cause: "timeout", detail: "" } };
  }
  return {
    kind: "unclear",
    fault: { sent: true, cause: packSent ? "closed" : "other", detail: packSent ? "connection lost" : "" },
  };
}

/**
 * The message of a failed read of a remote before anything was written (the fetch before a
 * commit, the branch read before a push): names the remote's origin and the cause when the
 * connection could not be opened. Always ends "nothing was written".
 * @param what e.g. "fetching main before committing".
 */
export function readFailureMessage(what: string, remoteUrl: string, e: GitFailed): string {
  const f = classifyRemoteFailure(e);
  if (f.kind === "not-sent") return `${faultMessage(what, remoteUrl, f.fault)}; nothing was written`;
  return `${what} failed (git ${e.args[0] ?? ""}: ${lineOf(e.stderr) || `exit ${e.exitCode}`}); nothing was written`;
}

/** Time budget of one remote write and the read that may follow it, from the caller's deadline. */
export interface RemoteBudget {
  /** Longest the push may take, ms. */
  pushMs: number;
  /** Longest the read after an unclear push may take, ms. */
  readMs: number;
}

/**
 * Splits the time left before `deadline` (epoch ms; Infinity: none) between the push and the read
 * after an unclear push, so the caller hears the outcome before it stops waiting: the push gets
 * at most `maxMs`, leaving a fifth of the time (at most 10 s) for the read; at least 1 s each.
 */
export function remoteBudget(deadline: number, maxMs: number): RemoteBudget {
  const left = Number.isFinite(deadline) ? deadline - Date.now() : Infinity;
  const readMs = Math.max(1000, Math.min(10_000, left / 5));
  return { pushMs: Math.max(1000, Math.min(maxMs, left - readMs)), readMs };
}

/**
 * After a push that ended without a clear answer: where the remote's branch is now decides.
 * @param read reads the remote branch (null: absent); may throw.
 * @returns "ok" when the branch is at `next` (the push happened).
 * @throws AnswerLost naming the remote's origin otherwise (elsewhere, at its old commit, unreadable).
 */
export async function settleUnclearPublish(
  what: string,
  remoteUrl: string,
  fault: TransportFault,
  next: string,
  read: () => Promise<string | null>,
): Promise<"ok"> {
  let now: string | null | undefined;
  try {
    now = await read();
  } catch {
    now = undefined;
  }
  if (now === next) return "ok";
  const seen =
    now === undefined
      ? "the remote's branch could not be read afterwards"
      : `the remote's branch was not at the pushed commit when read right after (${now === null ? "absent" : now.slice(0, 12)}), which does not prove the push failed`;
  throw new AnswerLost(`${faultMessage(what, remoteUrl, fault)} (${seen})`);
}
