/**
 * The worker's Temporal connections over TLS, from its environment (TEMPORAL_TLS_*): a real Temporal
 * dev server behind a test-only TLS-terminating proxy that requires a client certificate (mTLS).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { openSqliteEventStore } from "@gatehouse/event-store";
import { makeTestPki, type TestPki } from "@gatehouse/service-kit/test-pki";
import { startTemporalDevServer, type TemporalDevServer } from "@gatehouse/temporal-dev";
import { Client, Connection } from "@temporalio/client";
import { NativeConnection } from "@temporalio/worker";
import pino from "pino";
import { loadConfig } from "../src/config.ts";
import { startLifecycleWorker } from "../src/index.ts";
import { startTlsProxy, type TlsProxy } from "./support/tls-proxy.ts";

const SERVER_NAME = "temporal.gatehouse.test";
let dir: string;
let pki: TestPki;
let temporal: TemporalDevServer;
let proxy: TlsProxy;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "gh-temporal-tls-"));
  // The server certificate names only SERVER_NAME: dialling 127.0.0.1 works only with the override.
  pki = makeTestPki(dir, { serverNames: [SERVER_NAME], loopback: false });
  temporal = await startTemporalDevServer();
  proxy = await startTlsProxy({
    target: temporal.address,
    certFile: pki.serverCertFile,
    keyFile: pki.serverKeyFile,
    clientCaFile: pki.caFile,
  });
});
after(async () => {
  await proxy?.close();
  await temporal?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = (extra: NodeJS.ProcessEnv) => ({
  GATEHOUSE_DATA_DIR: dir,
  TEMPORAL_ADDRESS: proxy.address,
  TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
  TEMPORAL_TLS_CERT_FILE: pki.clientCertFile,
  TEMPORAL_TLS_KEY_FILE: pki.clientKeyFile,
  ...extra,
});

test("with TEMPORAL_TLS_CA_FILE, the client pair and the server name, both connections reach Temporal over mTLS", async () => {
  const config = loadConfig(env({ TEMPORAL_TLS_CA_FILE: pki.caFile }));
  const address = config.temporalAddress;
  const connection = await Connection.connect({ address, ...config.temporalSecurity });
  try {
    const ns = await connection.workflowService.describeNamespace({ namespace: "default" });
    assert.equal(ns.namespaceInfo?.name, "default");
    const client = new Client({ connection, namespace: "default" });
    const handle = await client.workflow.start("tlsProbeWorkflow", {
      taskQueue: "tls-probe",
      workflowId: `tls-probe-${Date.now()}`,
    });
    const described = await handle.describe();
    assert.equal(described.status.name, "RUNNING");
    await handle.terminate("TLS test done");
  } finally {
    await connection.close();
  }
  const native = await NativeConnection.connect({ address, ...config.temporalSecurity });
  try {
    const ns = await native.workflowService.describeNamespace({ namespace: "default" });
    assert.equal(ns.namespaceInfo?.name, "default");
  } finally {
    await native.close();
  }
});

test("the lifecycle worker started from that environment polls Temporal through the TLS proxy", async () => {
  const config = loadConfig(env({ TEMPORAL_TLS_CA_FILE: pki.caFile }));
  const store = openSqliteEventStore(join(dir, "events.sqlite"));
  const handshakes = proxy.accepted();
  const worker = await startLifecycleWorker({
    store,
    temporal: { address: config.temporalAddress, ...config.temporalSecurity },
    gatekeepers: {},
    logger: pino({ level: "silent" }),
  });
  try {
    // Its client and worker connections both came through the proxy's mTLS handshake.
    assert.ok(proxy.accepted() >= handshakes + 2, `${proxy.accepted() - handshakes} TLS connections`);
  } finally {
    await worker.close();
    await store.close();
  }
});

/** Starts the worker with `extra` settings and returns the start-up error (the test fails if it starts). */
async function startFails(extra: NodeJS.ProcessEnv): Promise<Error> {
  const config = loadConfig(env(extra));
  const store = openSqliteEventStore(join(dir, "events.sqlite"));
  try {
    const worker = await startLifecycleWorker({
      store,
      temporal: { address: config.temporalAddress, ...config.temporalSecurity },
      gatekeepers: {},
      logger: pino({ level: "silent" }),
    });
    await worker.close();
    assert.fail("the worker started");
  } catch (err) {
    return err as Error;
  } finally {
    await store.close();
  }
}

test("a CA that did not sign the server's certificate fails the start, naming the certificate problem and TEMPORAL_TLS_CA_FILE", async () => {
  const err = await startFails({ TEMPORAL_TLS_CA_FILE: pki.otherCaFile });
  assert.equal(err.name, "TemporalUnreachable");
  assert.match(
    err.message,
    /^cannot connect to Temporal at 127\.0\.0\.1:\d+ \(TEMPORAL_ADDRESS, TLS\): .*; the server's certificate is not trusted \(.*(self-signed|issuer).*\); set TEMPORAL_TLS_CA_FILE to the CA that signed it$/,
  );
  // The worker's own (Rust) connection refuses it too.
  const config = loadConfig(env({ TEMPORAL_TLS_CA_FILE: pki.otherCaFile }));
  await assert.rejects(
    NativeConnection.connect({ address: config.temporalAddress, ...config.temporalSecurity }),
    /InvalidCertificate\(UnknownIssuer\)/,
  );
});

test("without the server name override, or without a client certificate, the start fails naming the variable to fix", async () => {
  const noName = await startFails({ TEMPORAL_TLS_CA_FILE: pki.caFile, TEMPORAL_TLS_SERVER_NAME: undefined });
  assert.match(
    noName.message,
    /the server's certificate is not for this name \(.*\); set TEMPORAL_TLS_SERVER_NAME/,
  );
  const noPair = await startFails({
    TEMPORAL_TLS_CA_FILE: pki.caFile,
    TEMPORAL_TLS_CERT_FILE: undefined,
    TEMPORAL_TLS_KEY_FILE: undefined,
  });
  assert.match(
    noPair.message,
    /the server refused the client certificate \(.*alert.*\); set TEMPORAL_TLS_CERT_FILE\/TEMPORAL_TLS_KEY_FILE/,
  );
});
