/**
 * TLS and API-key settings of a service's Temporal client (kernel, approval, worker): one definition
 * of TEMPORAL_TLS, TEMPORAL_TLS_CA_FILE, TEMPORAL_TLS_CERT_FILE/TEMPORAL_TLS_KEY_FILE,
 * TEMPORAL_TLS_SERVER_NAME and TEMPORAL_API_KEY_FILE, mapped to the Temporal SDK's `tls` and `apiKey`
 * connection options (the same for the client Connection and the worker NativeConnection).
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { checkClientPair, type PemFile, pemFileField } from "./pem-file.ts";

/**
 * The Temporal SDK's TLSConfig (@temporalio/common), structurally: what `Connection.connect({ tls })`
 * and `NativeConnection.connect({ tls })` take.
 */
export interface TemporalTlsConfig {
  /** Name checked against the server certificate (and sent as SNI) instead of the address's host. */
  serverNameOverride?: string;
  /** PEM CA certificate(s) the server certificate must chain to; absent: the system's roots. */
  serverRootCACertificate?: Buffer;
  /** mTLS: the client certificate (PEM) and its private key (PEM). */
  clientCertPair?: { crt: Buffer; key: Buffer };
}

/** How a Temporal client secures its connection: spread into `Connection.connect` / `NativeConnection.connect`. */
export interface TemporalSecurity {
  /** Absent: plaintext (the dev server). */
  tls?: TemporalTlsConfig;
  /** Temporal Cloud API key, sent as "Authorization: Bearer <key>" (only over TLS). */
  apiKey?: string;
}

const apiKeyFile = z
  .string()
  .min(1, "set the path of a file holding the API key, or leave the variable unset")
  .transform((path, ctx) => {
    let key: string;
    try {
      key = readFileSync(path, "utf8").trim();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      ctx.addIssue({
        code: "custom",
        message: `${path} ${code === "ENOENT" ? "does not exist" : "is not readable"}; mount the API key there or fix the path`,
      });
      return z.NEVER;
    }
    if (!key || /\s/.test(key)) {
      ctx.addIssue({ code: "custom", message: `${path} must hold the API key alone on one line` });
      return z.NEVER;
    }
    return key;
  });

/**
 * The zod fields of the Temporal TLS variables, to spread into a service's env schema next to
 * TEMPORAL_ADDRESS; check them with {@link checkTemporalTlsEnv}, map them with {@link temporalSecurity}.
 * Files are read during validation (a missing or malformed one is an issue naming its variable).
 */
export const TEMPORAL_TLS_ENV = {
  /** "true" / "false"; unset: TLS when any variable below is set. */
  TEMPORAL_TLS: z
    .enum(["true", "false"], {
      error: "expected true or false (unset: TLS when a TEMPORAL_TLS_* file is set)",
    })
    .optional(),
  TEMPORAL_TLS_CA_FILE: pemFileField("certificate").optional(),
  TEMPORAL_TLS_CERT_FILE: pemFileField("certificate").optional(),
  TEMPORAL_TLS_KEY_FILE: pemFileField("private key").optional(),
  TEMPORAL_TLS_SERVER_NAME: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/, "expected the DNS name in the server certificate, e.g. temporal.example.com")
    .optional(),
  TEMPORAL_API_KEY_FILE: apiKeyFile.optional(),
};

/** The parsed values of {@link TEMPORAL_TLS_ENV}. */
export interface TemporalTlsEnv {
  TEMPORAL_TLS?: "true" | "false" | undefined;
  TEMPORAL_TLS_CA_FILE?: PemFile | undefined;
  TEMPORAL_TLS_CERT_FILE?: PemFile | undefined;
  TEMPORAL_TLS_KEY_FILE?: PemFile | undefined;
  TEMPORAL_TLS_SERVER_NAME?: string | undefined;
  TEMPORAL_API_KEY_FILE?: string | undefined;
}

/**
 * Cross-variable checks, for the env schema's `.superRefine`: a client certificate needs its key
 * (and the reverse) and they must pair; TEMPORAL_TLS=false with any TLS setting or an API key is
 * refused rather than connecting in plaintext.
 */
export function checkTemporalTlsEnv(e: TemporalTlsEnv, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
  const cert = e.TEMPORAL_TLS_CERT_FILE;
  const key = e.TEMPORAL_TLS_KEY_FILE;
  checkClientPair(ctx, "TEMPORAL_TLS_CERT_FILE", "TEMPORAL_TLS_KEY_FILE", cert, key);
  if (e.TEMPORAL_TLS === "false") {
    const set = [
      "TEMPORAL_TLS_CA_FILE",
      "TEMPORAL_TLS_CERT_FILE",
      "TEMPORAL_TLS_KEY_FILE",
      "TEMPORAL_TLS_SERVER_NAME",
    ]
      .filter((name) => e[name as keyof TemporalTlsEnv] !== undefined)
      .concat(e.TEMPORAL_API_KEY_FILE !== undefined ? ["TEMPORAL_API_KEY_FILE"] : []);
    if (set.length)
      issue(
        "TEMPORAL_TLS",
        `is false but ${set.join(", ")} ${set.length > 1 ? "are" : "is"} set${e.TEMPORAL_API_KEY_FILE !== undefined ? " (an API key is only sent over TLS)" : ""}; unset TEMPORAL_TLS or ${set.length > 1 ? "them" : "it"}`,
      );
  }
}

/**
 * Maps validated {@link TEMPORAL_TLS_ENV} values to the SDK's connection options.
 * @returns `{}` for plaintext; `{ tls }` (and `apiKey`) when TEMPORAL_TLS=true or any file or the
 *   server name is set.
 */
export function temporalSecurity(e: TemporalTlsEnv): TemporalSecurity {
  const wanted =
    e.TEMPORAL_TLS === "true" ||
    (e.TEMPORAL_TLS === undefined &&
      !!(
        e.TEMPORAL_TLS_CA_FILE ||
        e.TEMPORAL_TLS_CERT_FILE ||
        e.TEMPORAL_TLS_KEY_FILE ||
        e.TEMPORAL_TLS_SERVER_NAME ||
        e.TEMPORAL_API_KEY_FILE
      ));
  if (!wanted) return {};
  const tls: TemporalTlsConfig = {};
  if (e.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = e.TEMPORAL_TLS_SERVER_NAME;
  if (e.TEMPORAL_TLS_CA_FILE) tls.serverRootCACertificate = e.TEMPORAL_TLS_CA_FILE.pem;
  if (e.TEMPORAL_TLS_CERT_FILE && e.TEMPORAL_TLS_KEY_FILE)
    tls.clientCertPair = { crt: e.TEMPORAL_TLS_CERT_FILE.pem, key: e.TEMPORAL_TLS_KEY_FILE.pem };
  return e.TEMPORAL_API_KEY_FILE ? { tls, apiKey: e.TEMPORAL_API_KEY_FILE } : { tls };
}

/**
 * A log-safe summary of {@link TemporalSecurity} (no key, no certificate bytes), e.g.
 * `{ tls: "mtls", serverName: "temporal.example.com", ca: "custom", apiKey: false }` or `{ tls: "off" }`.
 */
export function describeTemporalSecurity(s: TemporalSecurity): Record<string, string | boolean> {
  if (!s.tls) return { tls: "off" };
  return {
    tls: s.tls.clientCertPair ? "mtls" : "on",
    ca: s.tls.serverRootCACertificate ? "custom" : "system",
    ...(s.tls.serverNameOverride ? { serverName: s.tls.serverNameOverride } : {}),
    apiKey: s.apiKey !== undefined,
  };
}
