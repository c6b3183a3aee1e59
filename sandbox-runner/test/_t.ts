import pino from "pino";
import { executeSnippet } from "../src/client.ts";
import { startSandboxRunner } from "../src/index.ts";

const r = await startSandboxRunner({ mode: "gvisor", logger: pino({ level: "warn" }) });
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  const res = await executeSnippet(`127.0.0.1:${r.port}`, {
    executionId: "e1",
    workspaceId: "ws-test",
    code: `export default async () => 1`,
  });
  console.log(Math.round(performance.now() - t), res.durationMs, res.ok);
}
await r.close();
