/**
 * Process entry of gatekeeper-mcp (the kit's `runGatekeeperProcess`). Environment (validated with
 * zod at start-up):
 * - GATEKEEPER_MCP_ADDR          host:port of the gRPC server (default 127.0.0.1:7003)
 * - APPROVAL_ADDRESS             host:port of the approval service (required)
 * - GATEKEEPER_MCP_REGISTRY      path of the YAML server registry (required)
 * - GATEKEEPER_MCP_METRICS_ADDR  host:port of /metrics and /healthz (default 127.0.0.1:9403)
 * - LOG_LEVEL                    pino level (default info)
 */

import { runGatekeeperProcess } from "@gatehouse/gatekeeper-kit";
import { z } from "zod";
import { startMcpGatekeeper } from "./index.ts";
import { loadRegistryFile } from "./registry.ts";

runGatekeeperProcess({
  name: "gatekeeper-mcp",
  envPrefix: "GATEKEEPER_MCP",
  addr: "127.0.0.1:7003",
  metricsAddr: "127.0.0.1:9403",
  env: {
    GATEKEEPER_MCP_REGISTRY: z.string().min(1, "must be the path of the YAML server registry"),
  },
  async start(env, base) {
    const registry = await loadRegistryFile(env.GATEKEEPER_MCP_REGISTRY);
    const gatekeeper = await startMcpGatekeeper({ ...base, registry });
    return {
      gatekeeper,
      config: {
        registry: env.GATEKEEPER_MCP_REGISTRY,
        servers: Object.keys(registry.servers),
        endpoints: Object.keys(registry.endpoints),
      },
    };
  },
});
