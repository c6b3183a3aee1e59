/**
 * Process entry of gatekeeper-postgres (the kit's `runGatekeeperProcess`). Environment (validated
 * with zod at start-up):
 * - GATEKEEPER_POSTGRES_ADDR          host:port of the gRPC server (default 127.0.0.1:7007)
 * - APPROVAL_ADDRESS                  host:port of the approval service (required)
 * - GATEKEEPER_POSTGRES_REGISTRY      path of the administrator's YAML registry of servers (required;
 *                                     registry.ts; a Secret on Kubernetes)
 * - GATEKEEPER_POSTGRES_METRICS_ADDR  host:port of /metrics and /healthz (default 127.0.0.1:9407)
 * - SANDBOX_MAX_FRAME_BYTES           the sandbox runners' frame cap, bytes (default 1048576, as theirs);
 *                                     every page is sized to fit one frame under it
 * - LOG_LEVEL                         pino level (default info)
 * Passwords are read from the files or environment variables the registry names.
 */
import { ConfigurationRefused, runGatekeeperProcess, sandboxMaxFrameBytes } from "@gatehouse/gatekeeper-kit";
import { z } from "zod";
import { loadRegistryFile, type RegistryConfig, startPostgresGatekeeper } from "./index.ts";

runGatekeeperProcess({
  name: "gatekeeper-postgres",
  envPrefix: "GATEKEEPER_POSTGRES",
  addr: "127.0.0.1:7007",
  metricsAddr: "127.0.0.1:9407",
  env: {
    GATEKEEPER_POSTGRES_REGISTRY: z
      .string()
      .min(
        1,
        "must name the YAML registry of PostgreSQL servers, e.g. /etc/gatekeeper-postgres/registry.yaml",
      ),
    SANDBOX_MAX_FRAME_BYTES: sandboxMaxFrameBytes,
  },
  async start(env, base) {
    let registry: RegistryConfig;
    try {
      registry = await loadRegistryFile(env.GATEKEEPER_POSTGRES_REGISTRY);
    } catch (e) {
      throw new ConfigurationRefused(`GATEKEEPER_POSTGRES_REGISTRY: ${(e as Error).message}`);
    }
    if (Object.keys(registry.servers).length === 0)
      base.logger.warn(
        { event: "registry_empty", registry: env.GATEKEEPER_POSTGRES_REGISTRY },
        "the postgres registry names no servers: every postgres:// binding will be refused until servers are added",
      );
    const gatekeeper = await startPostgresGatekeeper({
      ...base,
      registry,
      limits: { maxFrameBytes: env.SANDBOX_MAX_FRAME_BYTES },
    });
    return {
      gatekeeper,
      config: {
        servers: Object.entries(registry.servers).map(([name, s]) => ({ name, databases: s.databases })),
        maxFrameBytes: env.SANDBOX_MAX_FRAME_BYTES,
      },
    };
  },
});
