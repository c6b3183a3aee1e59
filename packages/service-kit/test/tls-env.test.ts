/** TEMPORAL_TLS_* / TEMPORAL_API_KEY_FILE and NATS_URL / NATS_TLS_*: mapped to the clients' options; bad input named. */
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { z } from "zod";
import {
  checkNatsTlsEnv,
  checkTemporalTlsEnv,
  describeTemporalSecurity,
  NATS_TLS_ENV,
  natsTls,
  natsUrlField,
  parseEnv,
  TEMPORAL_TLS_ENV,
  temporalSecurity,
} from "../src/index.ts";
import { makeTestPki } from "../src/test-pki.ts";

const dir = mkdtempSync(join(tmpdir(), "gh-tls-env-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const pki = makeTestPki(dir);
const keyFile = join(dir, "api-key");
writeFileSync(keyFile, "cloud-key-123\n");

const TemporalEnv = z.object(TEMPORAL_TLS_ENV).superRefine(checkTemporalTlsEnv);
const temporal = (env: NodeJS.ProcessEnv) => temporalSecurity(parseEnv(TemporalEnv, env, "demo"));
const NatsEnv = z
  .object({ NATS_URL: natsUrlField("set NATS_URL").optional(), ...NATS_TLS_ENV })
  .superRefine(checkNatsTlsEnv);
const nats = (env: NodeJS.ProcessEnv) => natsTls(parseEnv(NatsEnv, env, "demo"));

test("no Temporal TLS variable is plaintext; TEMPORAL_TLS=true alone is TLS with the system's roots", () => {
  assert.deepEqual(temporal({}), {});
  assert.deepEqual(temporal({ TEMPORAL_TLS: "true" }), { tls: {} });
  assert.deepEqual(describeTemporalSecurity(temporal({})), { tls: "off" });
});

test("the CA, client pair, server name and API key files map to the SDK's tls and apiKey options", () => {
  const s = temporal({
    TEMPORAL_TLS_CA_FILE: pki.caFile,
    TEMPORAL_TLS_CERT_FILE: pki.clientCertFile,
    TEMPORAL_TLS_KEY_FILE: pki.clientKeyFile,
    TEMPORAL_TLS_SERVER_NAME: "temporal.example.com",
    TEMPORAL_API_KEY_FILE: keyFile,
  });
  assert.deepEqual(s, {
    tls: {
      serverNameOverride: "temporal.example.com",
      serverRootCACertificate: readFileSync(pki.caFile),
      clientCertPair: { crt: readFileSync(pki.clientCertFile), key: readFileSync(pki.clientKeyFile) },
    },
    apiKey: "cloud-key-123",
  });
  assert.deepEqual(describeTemporalSecurity(s), {
    tls: "mtls",
    ca: "custom",
    serverName: "temporal.example.com",
    apiKey: true,
  });
  // Any one setting implies TLS.
  assert.deepEqual(temporal({ TEMPORAL_API_KEY_FILE: keyFile }), { tls: {}, apiKey: "cloud-key-123" });
  assert.deepEqual(temporal({ TEMPORAL_TLS_SERVER_NAME: "t.example" }), {
    tls: { serverNameOverride: "t.example" },
  });
});

test("bad Temporal TLS settings are refused naming the variable and the fix, never plaintext", () => {
  const notPem = join(dir, "not-pem");
  writeFileSync(notPem, "hello\n");
  const unreadable = join(dir, "unreadable.crt");
  writeFileSync(unreadable, readFileSync(pki.caFile));
  chmodSync(unreadable, 0);
  const cases: [NodeJS.ProcessEnv, RegExp][] = [
    [
      { TEMPORAL_TLS_CA_FILE: join(dir, "missing.crt") },
      /TEMPORAL_TLS_CA_FILE: \S+missing\.crt does not exist; mount the certificate there or fix the path/,
    ],
    [{ TEMPORAL_TLS_CA_FILE: notPem }, /TEMPORAL_TLS_CA_FILE: \S+not-pem holds no PEM certificate/],
    [{ TEMPORAL_TLS_CA_FILE: pki.clientKeyFile }, /TEMPORAL_TLS_CA_FILE: .*holds no PEM certificate/],
    [
      { TEMPORAL_TLS_KEY_FILE: pki.caFile, TEMPORAL_TLS_CERT_FILE: pki.clientCertFile },
      /TEMPORAL_TLS_KEY_FILE: .*holds no PEM private key/,
    ],
    [
      { TEMPORAL_TLS_CERT_FILE: pki.clientCertFile },
      /TEMPORAL_TLS_KEY_FILE: set it to the private key of TEMPORAL_TLS_CERT_FILE \(mTLS needs both\)/,
    ],
    [
      { TEMPORAL_TLS_KEY_FILE: pki.clientKeyFile },
      /TEMPORAL_TLS_CERT_FILE: set it to the client certificate/,
    ],
    [
      { TEMPORAL_TLS_CERT_FILE: pki.clientCertFile, TEMPORAL_TLS_KEY_FILE: pki.serverKeyFile },
      /TEMPORAL_TLS_KEY_FILE: \S+server\.key is not the private key of the certificate in TEMPORAL_TLS_CERT_FILE/,
    ],
    [
      { TEMPORAL_TLS: "false", TEMPORAL_TLS_CA_FILE: pki.caFile },
      /TEMPORAL_TLS: is false but TEMPORAL_TLS_CA_FILE is set; unset TEMPORAL_TLS or it$/,
    ],
    [
      { TEMPORAL_TLS: "false", TEMPORAL_API_KEY_FILE: keyFile },
      /TEMPORAL_TLS: is false but TEMPORAL_API_KEY_FILE is set \(an API key is only sent over TLS\)/,
    ],
    [{ TEMPORAL_TLS: "yes" }, /TEMPORAL_TLS: expected true or false/],
    [
      { TEMPORAL_TLS_CA_FILE: "" },
      /TEMPORAL_TLS_CA_FILE: set the path of a PEM certificate, or leave the variable unset/,
    ],
    [
      { TEMPORAL_API_KEY_FILE: notPem.replace("not-pem", "nope") },
      /TEMPORAL_API_KEY_FILE: \S+nope does not exist; mount the API key there/,
    ],
  ];
  if (process.getuid?.() !== 0)
    cases.push([
      { TEMPORAL_TLS_CA_FILE: unreadable },
      /TEMPORAL_TLS_CA_FILE: \S+unreadable\.crt is not readable/,
    ]);
  for (const [env, expected] of cases) assert.throws(() => temporal(env), expected, JSON.stringify(env));
});

test("nats:// with no files is plaintext; tls:// or any NATS_TLS_* file makes nats.js require TLS with those files", () => {
  assert.equal(nats({ NATS_URL: "nats://127.0.0.1:4222" }), undefined);
  assert.deepEqual(nats({ NATS_URL: "tls://nats.example.com:4222" }), {});
  assert.deepEqual(
    nats({
      NATS_URL: "nats://127.0.0.1:4222",
      NATS_TLS_CA_FILE: pki.caFile,
      NATS_TLS_CERT_FILE: pki.clientCertFile,
      NATS_TLS_KEY_FILE: pki.clientKeyFile,
    }),
    { caFile: pki.caFile, certFile: pki.clientCertFile, keyFile: pki.clientKeyFile },
  );
});

test("bad NATS TLS settings are refused naming the variable and the fix", () => {
  const url = "tls://127.0.0.1:4222";
  const cases: [NodeJS.ProcessEnv, RegExp][] = [
    [
      { NATS_URL: url, NATS_TLS_CA_FILE: join(dir, "gone.crt") },
      /NATS_TLS_CA_FILE: \S+gone\.crt does not exist/,
    ],
    [
      { NATS_URL: url, NATS_TLS_CERT_FILE: pki.clientCertFile },
      /NATS_TLS_KEY_FILE: set it to the private key of NATS_TLS_CERT_FILE/,
    ],
    [
      { NATS_URL: url, NATS_TLS_CERT_FILE: pki.serverCertFile, NATS_TLS_KEY_FILE: pki.clientKeyFile },
      /NATS_TLS_KEY_FILE: .*is not the private key of the certificate in NATS_TLS_CERT_FILE/,
    ],
    [
      { NATS_URL: "tls://a:4222,nats://b:4222" },
      /NATS_URL: mixes nats:\/\/ and tls:\/\/ servers; use tls:\/\/ for all/,
    ],
    [{ NATS_URL: "https://a:4222" }, /NATS_URL: expected nats:\/\/host:port, or tls:\/\/host:port for TLS/],
    [
      { NATS_TLS_CA_FILE: pki.caFile },
      /NATS_URL: set it to the NATS server\(s\) the NATS_TLS_\* files are for/,
    ],
  ];
  for (const [env, expected] of cases) assert.throws(() => nats(env), expected, JSON.stringify(env));
});
