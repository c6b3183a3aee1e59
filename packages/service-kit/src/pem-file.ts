/** Reading the PEM files that TLS settings name (a CA, a client certificate, its key), checked at start-up. */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";

/** What a PEM file holds: one or more certificates (a CA bundle, a chain) or one private key. */
export type PemKind = "certificate" | "private key";

/** A PEM file read and parsed at start-up: its path (for clients that re-read it) and its bytes. */
export interface PemFile {
  /** The path as given in the variable. */
  path: string;
  /** The file's bytes (PEM text). */
  pem: Buffer;
}

/**
 * Reads `path` and checks it holds a PEM `kind` that node:crypto parses.
 * @returns the file's bytes.
 * @throws Error saying what is wrong with the file (missing, unreadable, not PEM, encrypted key…),
 *   never its contents.
 */
export function readPemFile(path: string, kind: PemKind): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "does not exist" : code === "EACCES" ? "is not readable" : String(code);
    throw new Error(`${path} ${why}; mount the ${kind} there or fix the path`);
  }
  const text = pem.toString("utf8");
  const marker =
    kind === "certificate" ? /-----BEGIN CERTIFICATE-----/ : /-----BEGIN [A-Z ]*PRIVATE KEY-----/;
  if (!marker.test(text)) {
    throw new Error(
      `${path} holds no PEM ${kind} (no "-----BEGIN ${kind === "certificate" ? "CERTIFICATE" : "PRIVATE KEY"}-----" line); give the PEM file of the ${kind}`,
    );
  }
  try {
    if (kind === "certificate") new X509Certificate(pem);
    else createPrivateKey(pem);
  } catch (err) {
    const hint =
      kind === "private key" && /passphrase|encrypted/i.test((err as Error).message)
        ? "; encrypted keys are not supported, decrypt it (openssl pkey -in key.pem -out plain.pem)"
        : "";
    throw new Error(`${path} is not a valid PEM ${kind} (${(err as Error).message})${hint}`);
  }
  return pem;
}

/**
 * A zod field for a variable naming a PEM file: the path is read and parsed during validation, so a
 * missing or malformed file is an issue on that variable ("TEMPORAL_TLS_CA_FILE: /x does not exist; …").
 */
export function pemFileField(kind: PemKind) {
  return z
    .string()
    .min(1, `set the path of a PEM ${kind}, or leave the variable unset`)
    .transform((path, ctx): PemFile => {
      try {
        return { path, pem: readPemFile(path, kind) };
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
        return z.NEVER;
      }
    });
}

/** Checks that `key` is the private key of `cert` (both PEM). @returns false when they do not pair. */
export function keyMatchesCertificate(cert: Buffer, key: Buffer): boolean {
  try {
    return new X509Certificate(cert).checkPrivateKey(createPrivateKey(key));
  } catch {
    return false;
  }
}

/**
 * The client certificate/key pair check both TLS env definitions share, for an env schema's
 * `.superRefine`: `certVar` set without `keyVar` (or the reverse) is an issue on the missing one, and a
 * key that is not the certificate's is an issue on `keyVar`. Messages name both variables and the fix.
 */
export function checkClientPair(
  ctx: z.RefinementCtx,
  certVar: string,
  keyVar: string,
  cert: PemFile | undefined,
  key: PemFile | undefined,
): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
  if (cert && !key) issue(keyVar, `set it to the private key of ${certVar} (mTLS needs both)`);
  if (key && !cert) issue(certVar, `set it to the client certificate of ${keyVar} (mTLS needs both)`);
  if (cert && key && !keyMatchesCertificate(cert.pem, key.pem))
    issue(keyVar, `${key.path} is not the private key of the certificate in ${certVar} (${cert.path})`);
}
