/**
 * TLS settings of a service's NATS client (approval, gateway): one definition of NATS_URL (nats:// or
 * tls:// servers), NATS_TLS_CA_FILE and NATS_TLS_CERT_FILE/NATS_TLS_KEY_FILE, mapped to nats.js's
 * `tls: { caFile, certFile, keyFile }` option.
 */
import { z } from "zod";
import { checkClientPair, type PemFile, pemFileField } from "./pem-file.ts";

/**
 * nats.js's TlsOptions (the `tls` connection option), structurally. The files are re-read on every
 * (re)connection, so a rotated certificate is picked up without a restart.
 */
export interface NatsTlsOptions {
  /** PEM CA certificate(s) the server certificate must chain to; absent: the system's roots. */
  caFile?: string;
  /** mTLS: the client certificate (PEM) … */
  certFile?: string;
  /** … and its private key (PEM). */
  keyFile?: string;
}

/**
 * A zod field for NATS_URL: comma-separated `nats://host:port` or `tls://host:port` servers.
 * @param missing the message when the variable is required and unset.
 */
export function natsUrlField(missing: string) {
  return z
    .string({ error: missing })
    .regex(
      /^(nats|tls):\/\/\S+$/,
      "expected nats://host:port, or tls://host:port for TLS (comma-separate several servers)",
    );
}

/** The zod fields of the NATS TLS variables, to spread into a service's env schema next to NATS_URL. */
export const NATS_TLS_ENV = {
  NATS_TLS_CA_FILE: pemFileField("certificate").optional(),
  NATS_TLS_CERT_FILE: pemFileField("certificate").optional(),
  NATS_TLS_KEY_FILE: pemFileField("private key").optional(),
};

/** The parsed values of NATS_URL and {@link NATS_TLS_ENV}. */
export interface NatsTlsEnv {
  NATS_URL?: string | undefined;
  NATS_TLS_CA_FILE?: PemFile | undefined;
  NATS_TLS_CERT_FILE?: PemFile | undefined;
  NATS_TLS_KEY_FILE?: PemFile | undefined;
}

/**
 * Cross-variable checks, for the env schema's `.superRefine`: a client certificate needs its key
 * (and the reverse) and they must pair; the servers of NATS_URL are all nats:// or all tls://; TLS
 * files without NATS_URL are refused (they would be ignored).
 */
export function checkNatsTlsEnv(e: NatsTlsEnv, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
  const cert = e.NATS_TLS_CERT_FILE;
  const key = e.NATS_TLS_KEY_FILE;
  checkClientPair(ctx, "NATS_TLS_CERT_FILE", "NATS_TLS_KEY_FILE", cert, key);
  if (e.NATS_URL === undefined) {
    if (e.NATS_TLS_CA_FILE || cert || key)
      issue("NATS_URL", "set it to the NATS server(s) the NATS_TLS_* files are for, or unset those files");
    return;
  }
  const schemes = new Set(e.NATS_URL.split(",").map((s) => s.trim().split("://")[0]));
  if (schemes.size > 1)
    issue("NATS_URL", "mixes nats:// and tls:// servers; use tls:// for all of them (or nats:// for all)");
}

/**
 * Maps validated NATS_URL and {@link NATS_TLS_ENV} values to nats.js's `tls` option.
 * @returns undefined for plaintext (nats:// servers, no files); otherwise the options, with which
 *   nats.js refuses a server that does not offer TLS (never a silent plaintext connection).
 */
export function natsTls(e: NatsTlsEnv): NatsTlsOptions | undefined {
  const wanted =
    /^\s*tls:\/\//.test(e.NATS_URL ?? "") ||
    !!(e.NATS_TLS_CA_FILE || e.NATS_TLS_CERT_FILE || e.NATS_TLS_KEY_FILE);
  if (!wanted) return undefined;
  return {
    ...(e.NATS_TLS_CA_FILE ? { caFile: e.NATS_TLS_CA_FILE.path } : {}),
    ...(e.NATS_TLS_CERT_FILE ? { certFile: e.NATS_TLS_CERT_FILE.path } : {}),
    ...(e.NATS_TLS_KEY_FILE ? { keyFile: e.NATS_TLS_KEY_FILE.path } : {}),
  };
}
