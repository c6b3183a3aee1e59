/**
 * A throwaway PKI for tests of TLS settings, made with `openssl` (EC P-256, 1 day): a CA, a server
 * certificate (127.0.0.1, localhost and extra DNS names by default), a client certificate for mTLS, and an
 * unrelated CA that signed neither (the "wrong CA"). Tests only; never for a real deployment.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** Paths of the PEM files {@link makeTestPki} wrote. */
export interface TestPki {
  /** The CA that signed the server and client certificates. */
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  /** A CA that signed neither certificate. */
  otherCaFile: string;
}

function openssl(dir: string, args: string[]): void {
  try {
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`openssl ${args[0]} failed: ${stderr || (err as Error).message} (is openssl installed?)`);
  }
}

const EC_KEY = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes".split(" ");

function selfSignedCa(dir: string, name: string): void {
  openssl(dir, [
    "req",
    "-x509",
    ...EC_KEY,
    "-days",
    "1",
    "-subj",
    `/CN=gatehouse-test-${name}`,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.crt`,
  ]);
}

function signed(dir: string, name: string, usage: string, san: string | undefined): void {
  openssl(dir, [
    "req",
    "-new",
    ...EC_KEY,
    "-subj",
    `/CN=gatehouse-test-${name}`,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
  ]);
  const ext = [
    "basicConstraints=CA:FALSE",
    "keyUsage=critical,digitalSignature,keyEncipherment",
    `extendedKeyUsage=${usage}`,
    ...(san ? [`subjectAltName=${san}`] : []),
  ];
  writeFileSync(join(dir, `${name}.ext`), `${ext.join("\n")}\n`);
  const sign = "x509 -req -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -sha256".split(" ");
  openssl(dir, [...sign, "-in", `${name}.csr`, "-extfile", `${name}.ext`, "-out", `${name}.crt`]);
}

/**
 * Writes the PKI into `dir` (which must exist; the caller removes it).
 * @param options.serverNames extra DNS names of the server certificate.
 * @param options.loopback false: the server certificate is for `serverNames` only, not 127.0.0.1 and
 *   localhost (a client dialling 127.0.0.1 must then override the name it checks). Default true.
 * @throws Error with openssl's message when openssl is missing or fails.
 */
export function makeTestPki(
  dir: string,
  options: { serverNames?: string[]; loopback?: boolean } = {},
): TestPki {
  selfSignedCa(dir, "ca");
  selfSignedCa(dir, "other-ca");
  const names = options.serverNames ?? [];
  const san =
    options.loopback === false
      ? names.map((n) => `DNS:${n}`)
      : ["IP:127.0.0.1", ...["localhost", ...names].map((n) => `DNS:${n}`)];
  if (!san.length) throw new Error("makeTestPki: loopback false needs at least one serverNames entry");
  signed(dir, "server", "serverAuth", san.join(","));
  signed(dir, "client", "clientAuth", undefined);
  return {
    caFile: join(dir, "ca.crt"),
    serverCertFile: join(dir, "server.crt"),
    serverKeyFile: join(dir, "server.key"),
    clientCertFile: join(dir, "client.crt"),
    clientKeyFile: join(dir, "client.key"),
    otherCaFile: join(dir, "other-ca.crt"),
  };
}
