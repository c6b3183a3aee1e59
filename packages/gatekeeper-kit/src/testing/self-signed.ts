/**
 * A throwaway self-signed TLS certificate for tests of "the TLS handshake failed" (a client that
 * trusts only the system CAs refuses it). Made with the `openssl` command, which the set-up step
 * installs with the build tools.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Writes `key.pem` and `cert.pem` (RSA 2048, valid one day, CN `commonName`) into `dir`, an
 * existing directory the caller removes.
 * @returns the PEM key and certificate, as `node:https`'s `createServer` takes them.
 * @throws when `openssl` is missing or fails.
 */
export function selfSignedCertificate(dir: string, commonName = "127.0.0.1"): { key: Buffer; cert: Buffer } {
  const [key, cert] = [join(dir, "key.pem"), join(dir, "cert.pem")];
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      `/CN=${commonName}`,
    ],
    { stdio: "ignore" },
  );
  return { key: readFileSync(key), cert: readFileSync(cert) };
}
