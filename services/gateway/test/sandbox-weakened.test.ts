/**
 * A sandbox weakened on purpose (the Helm chart's acknowledgment) is reported: GATEHOUSE_SANDBOX_WEAKENED
 * is read as a list, and the gateway's `/healthz` answers `{ ok: true, sandboxWeakened: [...] }`; without
 * it `/healthz` is `{ ok: true }` alone.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { InProcessNoticeBus } from "@gatehouse/live-notices";
import { loadConfig } from "../src/config.ts";
import { startGateway } from "../src/index.ts";

const env = {
  GATEWAY_ADDR: "127.0.0.1:0",
  APPROVAL_ADDRESS: "127.0.0.1:1",
  KERNEL_ADDRESS: "127.0.0.1:1",
  NATS_URL: "nats://127.0.0.1:4222",
  OIDC_ISSUER: "https://id.example.com",
  OIDC_AUDIENCE: "gatehouse",
};

test("GATEHOUSE_SANDBOX_WEAKENED is a comma-separated list; unset = none; an empty item is refused naming it", () => {
  assert.deepEqual(loadConfig(env).sandboxWeakened, []);
  assert.deepEqual(
    loadConfig({ ...env, GATEHOUSE_SANDBOX_WEAKENED: "networkPolicy.enabled=false,runtimeClass.name=runc" })
      .sandboxWeakened,
    ["networkPolicy.enabled=false", "runtimeClass.name=runc"],
  );
  assert.throws(
    () => loadConfig({ ...env, GATEHOUSE_SANDBOX_WEAKENED: "networkPolicy.enabled=false,,x" }),
    /GATEHOUSE_SANDBOX_WEAKENED: expected a comma-separated list of the weakened values/,
  );
});

/** Starts a gateway (its backends are never called by /healthz) and returns GET /healthz's status and body. */
async function healthz(sandboxWeakened?: string[]): Promise<{ status: number; body: unknown }> {
  const gateway = await startGateway({
    approvalAddress: "127.0.0.1:1",
    kernelAddress: "127.0.0.1:1",
    notices: new InProcessNoticeBus(),
    devTokens: [{ token: "sandbox-weakened-token-0123", subject: "t", roles: ["approver"] }],
    ...(sandboxWeakened ? { sandboxWeakened } : {}),
  });
  try {
    const res = await fetch(`${gateway.url}/healthz`);
    return { status: res.status, body: await res.json() };
  } finally {
    await gateway.close();
  }
}

test("/healthz reports the weakened sandbox values, and only when there are some", async () => {
  assert.deepEqual(await healthz(), { status: 200, body: { ok: true } });
  assert.deepEqual(await healthz([]), { status: 200, body: { ok: true } });
  assert.deepEqual(
    await healthz(["networkPolicy.enabled=false", "sandboxRunner.containerSecurityContext.privileged=true"]),
    {
      status: 200,
      body: {
        ok: true,
        sandboxWeakened: [
          "networkPolicy.enabled=false",
          "sandboxRunner.containerSecurityContext.privileged=true",
        ],
      },
    },
  );
});
