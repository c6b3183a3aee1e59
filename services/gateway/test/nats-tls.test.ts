/**
 * The gateway's NATS client over TLS, from its environment (NATS_URL tls://, NATS_TLS_*): a real
 * nats-server requiring TLS and verifying client certificates (--tls --tlsverify).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { LogNotice } from "@gatehouse/gateway-contract";
import { connectNatsNoticeBus, type NoticeBus } from "@gatehouse/live-notices";
import { type NatsServerProcess, startNatsServer } from "@gatehouse/live-notices/nats-server";
import { waitUntil } from "@gatehouse/service-kit";
import { makeTestPki, type TestPki } from "@gatehouse/service-kit/test-pki";
import { loadConfig } from "../src/config.ts";

let dir: string;
let pki: TestPki;
let nats: NatsServerProcess;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "gh-nats-tls-"));
  pki = makeTestPki(dir);
  nats = await startNatsServer({
    tls: { certFile: pki.serverCertFile, keyFile: pki.serverKeyFile, clientCaFile: pki.caFile },
  });
});
after(async () => {
  await nats?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The gateway's configuration for `env` plus what every gateway needs, and the bus its main.ts connects. */
function connectAsGateway(env: NodeJS.ProcessEnv): Promise<NoticeBus> {
  const config = loadConfig({ OIDC_ISSUER: "https://id.example.com", OIDC_AUDIENCE: "gh", ...env });
  return connectNatsNoticeBus({
    servers: config.natsUrl,
    name: "gatehouse-gateway-test",
    ...(config.natsTls ? { tls: config.natsTls } : {}),
  });
}

const mtls = () => ({
  NATS_URL: nats.url,
  NATS_TLS_CA_FILE: pki.caFile,
  NATS_TLS_CERT_FILE: pki.clientCertFile,
  NATS_TLS_KEY_FILE: pki.clientKeyFile,
});

test("with tls://, NATS_TLS_CA_FILE and the client pair, notices published by one client reach another over mTLS", async () => {
  assert.match(nats.url, /^tls:\/\/127\.0\.0\.1:\d+$/);
  const subscriber = await connectAsGateway(mtls());
  const publisher = await connectAsGateway(mtls());
  try {
    const heard: LogNotice[] = [];
    subscriber.subscribe({ notice: (n) => heard.push(n), resync: () => {} });
    const notice = { workspaceId: "ws-tls", revision: 1, type: "ActionSubmitted" };
    // Published until heard: the subscription reaches the server asynchronously.
    await waitUntil(
      "a notice over TLS",
      () => {
        publisher.publish(notice);
        return heard.some((n) => n.workspaceId === "ws-tls");
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
  } finally {
    await publisher.close();
    await subscriber.close();
  }
});

test("without the CA that signed the server's certificate, the connection fails naming the TLS error and the variables", async () => {
  const { NATS_TLS_CA_FILE: _, ...noCa } = mtls();
  await assert.rejects(
    connectAsGateway(noCa),
    /^NatsUnreachable: cannot connect to NATS at tls:\/\/127\.0\.0\.1:\d+: .*(self-signed certificate|unable to (get|verify)).*; start nats-server with TLS or fix NATS_URL, NATS_TLS_CA_FILE/,
  );
  await assert.rejects(
    connectAsGateway({ ...mtls(), NATS_TLS_CA_FILE: pki.otherCaFile }),
    /cannot connect to NATS at tls:.*(self-signed certificate|unable to (get|verify)).*NATS_TLS_CA_FILE/,
  );
});

test("without a client certificate the server (--tlsverify) refuses the connection", async () => {
  await assert.rejects(
    connectAsGateway({ NATS_URL: nats.url, NATS_TLS_CA_FILE: pki.caFile }),
    /cannot connect to NATS at tls:.*: timed out during the TLS handshake \(a server that verifies clients needs NATS_TLS_CERT_FILE\/NATS_TLS_KEY_FILE\)/,
  );
});

test("tls:// to a server without TLS fails instead of connecting in plaintext", async () => {
  const plain = await startNatsServer();
  try {
    await assert.rejects(
      connectAsGateway({ NATS_URL: plain.url.replace("nats://", "tls://") }),
      /cannot connect to NATS at tls:.*: the server does not offer TLS \(the client never falls back to plaintext\); start nats-server with TLS/,
    );
  } finally {
    await plain.close();
  }
});
