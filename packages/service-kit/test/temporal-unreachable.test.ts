/** probeTemporalTls / temporalUnreachable: what a TLS handshake with the server found, against real node:tls and TCP servers. */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createTcpServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { createServer as createTlsServer } from "node:tls";
import { freePort, probeTemporalTls, temporalUnreachable } from "../src/index.ts";
import { makeTestPki } from "../src/test-pki.ts";

const dir = mkdtempSync(join(tmpdir(), "gh-probe-"));
const pki = makeTestPki(dir, { serverNames: ["temporal.test"], loopback: false });
const servers: Server[] = [];
after(() => {
  for (const s of servers) s.close();
  rmSync(dir, { recursive: true, force: true });
});

async function listen(server: Server): Promise<string> {
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  servers.push(server);
  return `127.0.0.1:${port}`;
}

/** A TLS server like a Temporal frontend: ALPN h2, sends bytes once the handshake is done; mTLS when asked. */
function tlsServer(mtls: boolean): Promise<string> {
  const server = createTlsServer(
    {
      cert: readFileSync(pki.serverCertFile),
      key: readFileSync(pki.serverKeyFile),
      ALPNProtocols: ["h2"],
      ...(mtls ? { ca: readFileSync(pki.caFile), requestCert: true, rejectUnauthorized: true } : {}),
    },
    (socket) => {
      socket.on("error", () => {});
      socket.write("preface");
    },
  );
  server.on("tlsClientError", () => {});
  return listen(server);
}

const ca = readFileSync(pki.caFile);
const pair = { crt: readFileSync(pki.clientCertFile), key: readFileSync(pki.clientKeyFile) };

test("a handshake with the right CA, name and client pair finds nothing wrong; TLS off is not probed", async () => {
  const address = await tlsServer(true);
  const tls = { serverRootCACertificate: ca, serverNameOverride: "temporal.test", clientCertPair: pair };
  assert.equal(await probeTemporalTls(address, { tls }), undefined);
  assert.equal(await probeTemporalTls(address, {}), undefined);
});

test("each TLS mistake is named with the variable to fix", async () => {
  const address = await tlsServer(true);
  const other = readFileSync(pki.otherCaFile);
  const cases: [object, RegExp][] = [
    [
      { serverRootCACertificate: other, serverNameOverride: "temporal.test", clientCertPair: pair },
      /^the server's certificate is not trusted \(.+\); set TEMPORAL_TLS_CA_FILE to the CA that signed it$/,
    ],
    [
      { serverRootCACertificate: ca, clientCertPair: pair },
      /^the server's certificate is not for this name \(.*127\.0\.0\.1.*\); set TEMPORAL_TLS_SERVER_NAME/,
    ],
    [
      { serverRootCACertificate: ca, serverNameOverride: "temporal.test" },
      /^the server refused the client certificate \(tlsv1\S* alert [a-z ]+\); set TEMPORAL_TLS_CERT_FILE\/TEMPORAL_TLS_KEY_FILE/,
    ],
  ];
  for (const [tls, expected] of cases)
    assert.match((await probeTemporalTls(address, { tls })) ?? "(none)", expected);
});

test("a plaintext server is named as not speaking TLS; nothing listening is left to the generic message", async () => {
  const plain = createTcpServer((s) => {
    s.on("error", () => {});
    s.end("HTTP/1.1 400 Bad Request\r\n\r\n");
  });
  const address = await listen(plain);
  assert.match(
    (await probeTemporalTls(address, { tls: {} })) ?? "(none)",
    /^the server does not speak TLS \(.+\); unset TEMPORAL_TLS/,
  );
  const closed = `127.0.0.1:${await freePort()}`;
  assert.equal(await probeTemporalTls(closed, { tls: {} }), undefined);
  const err = await temporalUnreachable(
    closed,
    { tls: {} },
    new Error("Failed to connect before the deadline"),
  );
  assert.equal(err.name, "TemporalUnreachable");
  assert.equal(
    err.message,
    `cannot connect to Temporal at ${closed} (TEMPORAL_ADDRESS, TLS): Failed to connect before the deadline; start the Temporal server or fix TEMPORAL_ADDRESS and the TEMPORAL_TLS_* settings`,
  );
});
