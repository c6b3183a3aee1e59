/** Configuration from the environment: Temporal target, action TTL, and errors naming the variable. */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { DEFAULT_ACTION_TTL_MS } from "@gatehouse/approval-core/lifecycle-contract";
import { makeTestPki } from "@gatehouse/service-kit/test-pki";
import { loadConfig } from "../src/config.ts";
import { parseDurationMs } from "../src/duration.ts";

const base = {
  GATEHOUSE_DATA_DIR: "/tmp/gh",
  GATEHOUSE_CALLER_TOKEN_SECRET: "x".repeat(32),
  TEMPORAL_ADDRESS: "127.0.0.1:7233",
};

test("durations accept days, hours, minutes, seconds, milliseconds and bare milliseconds", () => {
  assert.equal(parseDurationMs("7d"), 7 * 86_400_000);
  assert.equal(parseDurationMs("12h"), 12 * 3_600_000);
  assert.equal(parseDurationMs("30m"), 1_800_000);
  assert.equal(parseDurationMs("90s"), 90_000);
  assert.equal(parseDurationMs("250ms"), 250);
  assert.equal(parseDurationMs("1500"), 1500);
  for (const bad of ["", "7 days", "-1s", "0", "1w", "s"]) assert.equal(parseDurationMs(bad), undefined, bad);
});

test("the Temporal target defaults to namespace default and the TTL to 7 days", () => {
  const c = loadConfig(base);
  assert.deepEqual(c.temporal, { address: "127.0.0.1:7233", namespace: "default" });
  assert.equal(c.actionTtlMs, DEFAULT_ACTION_TTL_MS);
  const d = loadConfig({ ...base, TEMPORAL_NAMESPACE: "prod", GATEHOUSE_ACTION_TTL: "90s" });
  assert.deepEqual(d.temporal, { address: "127.0.0.1:7233", namespace: "prod" });
  assert.equal(d.actionTtlMs, 90_000);
});

test("a missing TEMPORAL_ADDRESS or a bad GATEHOUSE_ACTION_TTL is refused, naming the variable", () => {
  const { TEMPORAL_ADDRESS: _, ...noTemporal } = base;
  assert.throws(() => loadConfig(noTemporal), /TEMPORAL_ADDRESS: .*127\.0\.0\.1:7233/);
  assert.throws(
    () => loadConfig({ ...base, TEMPORAL_ADDRESS: "localhost" }),
    /TEMPORAL_ADDRESS: expected host:port/,
  );
  assert.throws(
    () => loadConfig({ ...base, GATEHOUSE_ACTION_TTL: "a week" }),
    /GATEHOUSE_ACTION_TTL: expected a duration/,
  );
});

test("GATEKEEPER_ADDRESSES (for RequestRevert) is parsed per kind, defaults to none, and a bad part is named", () => {
  assert.deepEqual(loadConfig(base).gatekeepers, {});
  assert.deepEqual(
    loadConfig({ ...base, GATEKEEPER_ADDRESSES: "mcp=127.0.0.1:7003, git=127.0.0.1:7004" }).gatekeepers,
    { mcp: "127.0.0.1:7003", git: "127.0.0.1:7004" },
  );
  assert.throws(
    () => loadConfig({ ...base, GATEKEEPER_ADDRESSES: "mcp=127.0.0.1:7003,git" }),
    /GATEKEEPER_ADDRESSES: "git" is not kind=host:port/,
  );
});

test("APPLY_RUN_MAX sets the longest batch-apply run; a value that is not a positive whole number is refused naming it", () => {
  assert.equal(loadConfig(base).applyRunMax, undefined);
  assert.equal(loadConfig({ ...base, APPLY_RUN_MAX: "250" }).applyRunMax, 250);
  for (const bad of ["0", "-3", "2.5", "lots"]) {
    assert.throws(() => loadConfig({ ...base, APPLY_RUN_MAX: bad }), /APPLY_RUN_MAX/, bad);
  }
});

test("TEMPORAL_TLS_* give the Temporal target its tls option; tls:// and NATS_TLS_* the NATS client's; bad files are named", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "gh-approval-tls-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pki = makeTestPki(dir);
  const c = loadConfig({
    ...base,
    TEMPORAL_TLS_CA_FILE: pki.caFile,
    TEMPORAL_TLS_CERT_FILE: pki.clientCertFile,
    TEMPORAL_TLS_KEY_FILE: pki.clientKeyFile,
    NATS_URL: "tls://nats-1:4222,tls://nats-2:4222",
    NATS_TLS_CA_FILE: pki.caFile,
  });
  assert.deepEqual(c.temporal, {
    address: "127.0.0.1:7233",
    namespace: "default",
    tls: {
      serverRootCACertificate: readFileSync(pki.caFile),
      clientCertPair: { crt: readFileSync(pki.clientCertFile), key: readFileSync(pki.clientKeyFile) },
    },
  });
  assert.deepEqual(c.natsTls, { caFile: pki.caFile });
  assert.equal(loadConfig({ ...base, NATS_URL: "nats://127.0.0.1:4222" }).natsTls, undefined);
  assert.throws(
    () => loadConfig({ ...base, TEMPORAL_TLS_CERT_FILE: pki.clientCertFile }),
    /invalid approval configuration:\n {2}TEMPORAL_TLS_KEY_FILE: set it to the private key of TEMPORAL_TLS_CERT_FILE/,
  );
  assert.throws(
    () => loadConfig({ ...base, NATS_URL: "tls://n:4222", NATS_TLS_CA_FILE: join(dir, "none.crt") }),
    /NATS_TLS_CA_FILE: \S+none\.crt does not exist/,
  );
});

test("EVENT_STORE_URL selects the backend; GATEHOUSE_DATA_DIR alone means the embedded store; neither is refused", () => {
  assert.equal(loadConfig(base).eventStoreUrl, "sqlite:/tmp/gh/events.sqlite");
  const { GATEHOUSE_DATA_DIR: _, ...noDir } = base;
  assert.equal(
    loadConfig({ ...noDir, EVENT_STORE_URL: "postgres://app:pw@db:5432/gatehouse" }).eventStoreUrl,
    "postgres://app:pw@db:5432/gatehouse",
  );
  assert.throws(() => loadConfig(noDir), /EVENT_STORE_URL: set EVENT_STORE_URL \(sqlite:<path> or postgres:/);
  assert.throws(() => loadConfig({ ...base, EVENT_STORE_URL: "mysql://db/x" }), /EVENT_STORE_URL: .*mysql/);
});
