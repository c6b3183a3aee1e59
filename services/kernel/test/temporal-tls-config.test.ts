/** The kernel process refuses bad Temporal TLS settings at start-up (exit 2), naming the variable and the fix. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { makeTestPki } from "@gatehouse/service-kit/test-pki";

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));

test("a client certificate without its key, or a CA file that does not exist, stops the kernel before it starts", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "gh-kernel-tls-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pki = makeTestPki(dir);
  const run = (extra: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, ["--import", "tsx", main], {
      env: {
        PATH: process.env.PATH,
        GATEHOUSE_DATA_DIR: dir,
        GATEHOUSE_CALLER_TOKEN_SECRET: "k".repeat(32),
        TEMPORAL_ADDRESS: "127.0.0.1:7233",
        KERNEL_ADDR: "127.0.0.1:0",
        ...extra,
      },
      encoding: "utf8",
      timeout: 60_000,
    });
  const noKey = run({ TEMPORAL_TLS_CERT_FILE: pki.clientCertFile });
  assert.equal(noKey.status, 2, noKey.stderr);
  assert.match(
    noKey.stderr,
    /invalid kernel configuration:\n {2}TEMPORAL_TLS_KEY_FILE: set it to the private key of TEMPORAL_TLS_CERT_FILE \(mTLS needs both\)/,
  );
  const noCa = run({ TEMPORAL_TLS_CA_FILE: join(dir, "missing-ca.crt") });
  assert.equal(noCa.status, 2, noCa.stderr);
  assert.match(
    noCa.stderr,
    /TEMPORAL_TLS_CA_FILE: \S+missing-ca\.crt does not exist; mount the certificate there or fix the path/,
  );
});
