/**
 * Explaining a failed connection to Temporal at start-up. The SDK's client only says "Failed to
 * connect before the deadline" when the TLS handshake fails, so with TLS on, a direct handshake with
 * the same settings (node:tls, ALPN h2) finds what went wrong: an untrusted certificate, a name that
 * does not match, a refused client certificate.
 */
import { connect } from "node:tls";
import type { TemporalSecurity } from "./temporal-tls.ts";

/** Temporal could not be reached at start-up; the message names the address, the cause and the variable to fix. */
export class TemporalUnreachable extends Error {
  override name = "TemporalUnreachable";
}

/**
 * Handshakes with `address` ("host:port") using `tls` as the Temporal client would.
 * @returns undefined when the handshake succeeds, TLS is off or nothing answers, else what failed and which
 *   variable to fix, e.g. "the TLS handshake failed: self-signed certificate in certificate chain;
 *   set TEMPORAL_TLS_CA_FILE to the CA that signed the server's certificate". Resolves within `timeoutMs`.
 */
export function probeTemporalTls(
  address: string,
  security: TemporalSecurity,
  timeoutMs = 5000,
): Promise<string | undefined> {
  const tls = security.tls;
  if (!tls) return Promise.resolve(undefined);
  const at = address.lastIndexOf(":");
  const host = address.slice(0, at);
  return new Promise((resolve) => {
    const socket = connect({
      host,
      port: Number(address.slice(at + 1)),
      // The name checked against the certificate (node uses servername, else host).
      ...(tls.serverNameOverride ? { servername: tls.serverNameOverride } : {}),
      ALPNProtocols: ["h2"],
      ...(tls.serverRootCACertificate ? { ca: tls.serverRootCACertificate } : {}),
      ...(tls.clientCertPair ? { cert: tls.clientCertPair.crt, key: tls.clientCertPair.key } : {}),
    });
    const done = (result: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(`no TLS handshake within ${timeoutMs} ms`), timeoutMs);
    // Under TLS 1.3 a server refusing our client certificate says so in an alert after the
    // handshake; one that accepts it sends its HTTP/2 preface: wait for either (or 1 s).
    socket.once("secureConnect", () => {
      socket.once("data", () => done(undefined));
      socket.resume();
      setTimeout(() => done(undefined), 1000).unref();
    });
    socket.once("error", (err) => done(explain(err)));
  });
}

/** @returns undefined when the server is not reachable at all (no TLS problem to report). */
function explain(err: NodeJS.ErrnoException): string | undefined {
  if (["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"].includes(err.code ?? ""))
    return undefined;
  // OpenSSL's errors carry a short `reason` ("wrong version number", "tlsv1 alert unknown ca").
  const reason = (err as { reason?: string }).reason;
  const m = (reason && /alert|version|length/i.test(reason) ? reason : err.message).trim();
  if (/altnames|does not match|Hostname/i.test(m))
    return `the server's certificate is not for this name (${m}); set TEMPORAL_TLS_SERVER_NAME to a name it holds`;
  if (
    /alert (unknown ca|bad certificate|certificate required|handshake failure)|alert number (40|42|48|116)/i.test(
      m,
    )
  )
    return `the server refused the client certificate (${m}); set TEMPORAL_TLS_CERT_FILE/TEMPORAL_TLS_KEY_FILE to a pair it accepts`;
  if (/certificate|issuer|self.signed|verify/i.test(m))
    return `the server's certificate is not trusted (${m}); set TEMPORAL_TLS_CA_FILE to the CA that signed it`;
  if (/wrong version number|packet length too long/i.test(m))
    return `the server does not speak TLS (${m}); unset TEMPORAL_TLS and the TEMPORAL_TLS_* files, or fix TEMPORAL_ADDRESS`;
  return `the TLS handshake failed (${m})`;
}

/**
 * The error to raise when `Connection.connect` / `NativeConnection.connect` failed at start-up:
 * the SDK's message, and with TLS on what {@link probeTemporalTls} found.
 */
export async function temporalUnreachable(
  address: string,
  security: TemporalSecurity,
  cause: unknown,
): Promise<TemporalUnreachable> {
  const message = cause instanceof Error ? cause.message : String(cause);
  const tls = await probeTemporalTls(address, security);
  const fix = security.tls
    ? "start the Temporal server or fix TEMPORAL_ADDRESS and the TEMPORAL_TLS_* settings"
    : "start the Temporal server or fix TEMPORAL_ADDRESS (a server that requires TLS needs TEMPORAL_TLS=true)";
  return new TemporalUnreachable(
    `cannot connect to Temporal at ${address} (TEMPORAL_ADDRESS${security.tls ? ", TLS" : ""}): ${message}; ${tls ?? fix}`,
  );
}
