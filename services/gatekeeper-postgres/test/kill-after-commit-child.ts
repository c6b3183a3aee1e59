/**
 * Test-only process entry (spawned by helpers.ts `spawnKillingGatekeeper`): a gatekeeper-postgres
 * whose `afterCommit` hook SIGKILLs its own process, so an apply dies after its transaction
 * committed and before its reply. The product has no such switch; only this script sets the hook.
 *
 * Environment: KILL_TEST_REGISTRY (RegistryInput as JSON), APPROVAL_ADDRESS (host:port), the
 * password variables the registry names. Prints one line `{"port":N}` once it serves.
 */
import { pino } from "pino";
import { createRegistry, startPostgresGatekeeper } from "../src/index.ts";

const gk = await startPostgresGatekeeper({
  registry: createRegistry(JSON.parse(process.env.KILL_TEST_REGISTRY ?? "")),
  approvalAddress: process.env.APPROVAL_ADDRESS ?? "",
  host: "127.0.0.1",
  port: 0,
  logger: pino({ level: process.env.TEST_LOG ?? "silent" }),
  afterCommit: () => process.kill(process.pid, "SIGKILL"),
});
process.stdout.write(`${JSON.stringify({ port: gk.port })}\n`);
