/**
 * The admin server registry: which stdio MCP servers may be launched (by registered name only)
 * and which Streamable HTTP endpoints are known (and whether an admin vetted them).
 *
 * YAML shape (file named by GATEKEEPER_MCP_REGISTRY):
 * ```yaml
 * servers:            # stdio servers, launched only for `mcp://<name>` resource URLs
 *   memory:
 *     command: node
 *     args: [/opt/mcp/server-memory/dist/index.js]
 *     env: { MEMORY_FILE_PATH: /var/lib/memory.jsonl }
 *     vetted: true
 *     restricted: false            # true: every observation is flagged containsRestrictedData
 *     restrictedTools: [read_graph] # observations of these tools are flagged
 * endpoints:          # Streamable HTTP endpoints
 *   everything:
 *     url: https://mcp.example.com/mcp
 *     vetted: true
 * ```
 * Invariant: nothing an agent or person supplies (a URL) can add a command; stdio servers come
 * only from this registry.
 */
import { readYamlConfigFile } from "@gatehouse/gatekeeper-kit";
import { z } from "zod";

/** Server and endpoint names: lower-case start, then letters, digits, `_` or `-` (max 63). */
export const ServerName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,62}$/, "use lower-case letters, digits, '_' or '-', starting with a letter");

/** A stdio MCP server the gatekeeper may launch. */
export const StdioServerConfig = z
  .object({
    command: z.string().min(1, "command must name an executable"),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    vetted: z.boolean().default(false),
    restricted: z.boolean().default(false),
    restrictedTools: z.array(z.string().min(1)).default([]),
  })
  .strict();
export type StdioServerConfig = z.infer<typeof StdioServerConfig>;

/** A Streamable HTTP endpoint (https, or http on loopback only). */
export const HttpEndpointConfig = z
  .object({
    url: z
      .string()
      .url("url must be an absolute https:// URL (http:// only for loopback)")
      .refine((u) => !u.includes("#"), "url must not carry a fragment; scope goes in resource URLs"),
    vetted: z.boolean().default(false),
    restricted: z.boolean().default(false),
    restrictedTools: z.array(z.string().min(1)).default([]),
  })
  .strict();
export type HttpEndpointConfig = z.infer<typeof HttpEndpointConfig>;

/** The whole registry. Names must be unique across `servers` and `endpoints`. */
export const RegistryConfig = z
  .object({
    servers: z.record(ServerName, StdioServerConfig).default({}),
    endpoints: z.record(ServerName, HttpEndpointConfig).default({}),
  })
  .strict()
  .superRefine((reg, ctx) => {
    for (const name of Object.keys(reg.endpoints)) {
      if (name in reg.servers) {
        ctx.addIssue({
          code: "custom",
          path: ["endpoints", name],
          message: `name "${name}" is used by both servers and endpoints; rename one`,
        });
      }
    }
  });
export type RegistryConfig = z.infer<typeof RegistryConfig>;
/** Input accepted by `createRegistry` (defaults filled in). */
export type RegistryInput = z.input<typeof RegistryConfig>;

/** Raised when registry configuration is invalid; the message names the path and the fix. */
export class RegistryInvalid extends Error {
  override name = "RegistryInvalid";
}

/**
 * Validates a registry given in code.
 * @throws RegistryInvalid naming each bad field (e.g. `servers.memory.command: ...`).
 */
export function createRegistry(input: RegistryInput): RegistryConfig {
  const parsed = RegistryConfig.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new RegistryInvalid(`server registry is invalid: ${issues.join("; ")}`);
  }
  return parsed.data;
}

/**
 * Reads and validates a YAML registry file.
 * @throws RegistryInvalid when the file cannot be read, is not YAML, or fails validation.
 */
export async function loadRegistryFile(path: string): Promise<RegistryConfig> {
  const doc = readYamlConfigFile(path, {
    what: "server registry file",
    setting: "GATEKEEPER_MCP_REGISTRY",
    fail: (m) => new RegistryInvalid(m),
  });
  return createRegistry(doc as RegistryInput);
}
