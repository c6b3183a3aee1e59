/** Process configuration of the gateway from environment variables, validated with zod (names the wrong variable). */
import {
  checkNatsTlsEnv,
  hostPort,
  InvalidConfiguration,
  NATS_TLS_ENV,
  type NatsTlsOptions,
  natsTls,
  natsUrlField,
  parseEnv,
  splitHostPort,
} from "@gatehouse/service-kit";
import { z } from "zod";
import type { DevToken } from "./auth/dev-tokens.ts";
import { loadDevTokensFile } from "./auth/dev-tokens.ts";
import type { OidcOptions } from "./auth/oidc.ts";

const EnvSchema = z
  .object({
    GATEWAY_ADDR: hostPort("127.0.0.1:8780").default("127.0.0.1:8780"),
    APPROVAL_ADDRESS: hostPort("127.0.0.1:7002").default("127.0.0.1:7002"),
    KERNEL_ADDRESS: hostPort("127.0.0.1:7001").default("127.0.0.1:7001"),
    AGENT_ADDRESS: hostPort("worker:7008").optional(),
    NATS_URL: natsUrlField(
      "set NATS_URL to the NATS server(s) carrying live notices, e.g. nats://127.0.0.1:4222",
    ),
    ...NATS_TLS_ENV,
    OIDC_ISSUER: z.url("expected the issuer URL exactly as in the tokens' iss").optional(),
    OIDC_AUDIENCE: z.string().min(1, "set the audience (client id) the tokens are issued for").optional(),
    OIDC_JWKS_URL: z.url("expected the JWKS URL").optional(),
    OIDC_ROLES_CLAIM: z.string().min(1).default("roles"),
    OIDC_CLIENT_ID: z
      .string()
      .min(1, "set the web app's client id, or leave it unset for no SSO button")
      .optional(),
    OIDC_SCOPE: z
      .string()
      .regex(/(^|\s)openid(\s|$)/, 'the scopes must include "openid", e.g. "openid profile email roles"')
      .default("openid profile email"),
    OIDC_ROLE_MAP: z
      .string()
      .regex(
        /^([^=,\s]+=(approver|auditor|admin))(,[^=,\s]+=(approver|auditor|admin))*$/,
        'expected "claimValue=role,..." with roles approver, auditor or admin, e.g. "gh-approvers=approver,sec=auditor"',
      )
      .optional(),
    GATEWAY_DEV_TOKENS_FILE: z.string().min(1).optional(),
    GATEWAY_WEB_DIST: z.string().min(1).optional(),
    METRICS_ADDR: hostPort("127.0.0.1:9780").optional(),
    GATEWAY_PUBLIC_URL: z
      .url("expected the gateway's public origin, e.g. https://gatehouse.example.com")
      .refine((u) => /^https?:$/.test(new URL(u).protocol) && /^\/?$/.test(new URL(u).pathname), {
        message:
          "expected an http(s) origin with no path, e.g. https://gatehouse.example.com (the MCP endpoint is <origin>/mcp)",
      })
      .optional(),
    GATEWAY_MCP_MAX_SESSIONS: z.coerce
      .number()
      .int("expected a whole number of sessions, e.g. 1000")
      .min(1, "expected at least 1 session")
      .max(100_000, "expected at most 100000 sessions")
      .default(1000),
    GATEWAY_MCP_IDLE_MINUTES: z.coerce
      .number()
      .int("expected whole minutes, e.g. 30")
      .min(1, "expected at least 1 minute")
      .max(1440, "expected at most 1440 minutes (a day)")
      .default(30),
    GATEWAY_MCP_ALLOWED_ORIGINS: z
      .string()
      .regex(
        /^https?:\/\/[^\s,/]+(,https?:\/\/[^\s,/]+)*$/,
        "expected comma-separated origins, e.g. https://agents.example.com,http://localhost:6274",
      )
      .optional(),
    GATEWAY_DRAIN_SECONDS: z.coerce
      .number()
      .int("expected whole seconds, e.g. 10")
      .min(0, "expected 0 (no drain) or more seconds")
      .max(300, "expected at most 300 seconds (keep it below the pod's terminationGracePeriodSeconds)")
      .default(0),
    GATEHOUSE_SANDBOX_WEAKENED: z
      .string()
      .regex(
        /^[^,\s][^,]*(,[^,\s][^,]*)*$/,
        'expected a comma-separated list of the weakened values, e.g. "networkPolicy.enabled=false,runtimeClass.name=runc"',
      )
      .optional(),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .refine((e) => !!e.OIDC_ISSUER === !!e.OIDC_AUDIENCE, {
    message: "set both OIDC_ISSUER and OIDC_AUDIENCE, or neither",
    path: ["OIDC_AUDIENCE"],
  })
  .refine((e) => !!e.OIDC_ISSUER || !!e.GATEWAY_DEV_TOKENS_FILE, {
    message: "configure OIDC (OIDC_ISSUER + OIDC_AUDIENCE) or dev tokens (GATEWAY_DEV_TOKENS_FILE)",
    path: ["OIDC_ISSUER"],
  })
  .superRefine(checkNatsTlsEnv);

/** The validated configuration of `main.ts`. */
export interface GatewayConfig {
  host: string;
  port: number;
  approvalAddress: string;
  kernelAddress: string;
  /** AGENT_ADDRESS: the worker's AgentChats service; undefined: every chat route answers 503 agent_off. */
  agentAddress: string | undefined;
  natsUrl: string;
  /** nats.js `tls` option from tls:// URLs and NATS_TLS_*; undefined = plaintext. */
  natsTls: NatsTlsOptions | undefined;
  oidc: OidcOptions | undefined;
  devTokens: DevToken[] | undefined;
  webDist: string | undefined;
  metrics: { host: string; port: number } | undefined;
  /** GATEWAY_PUBLIC_URL: the public origin; the MCP endpoint is `<publicUrl>/mcp`. */
  publicUrl: string | undefined;
  /** The MCP endpoint's bounds and the browser origins allowed besides the gateway's own. */
  mcp: { maxSessions: number; idleMs: number; allowedOrigins: string[] };
  /**
   * GATEWAY_DRAIN_SECONDS: after SIGTERM, how long (s) the gateway keeps serving with `/healthz`
   * answering 503 before it stops accepting connections (0: it stops at once).
   */
  drainSeconds: number;
  /**
   * GATEHOUSE_SANDBOX_WEAKENED (set by the Helm chart when the sandbox's protections were weakened on
   * purpose): each weakened value, e.g. "networkPolicy.enabled=false"; [] when none. `/healthz` reports them.
   */
  sandboxWeakened: string[];
  logLevel: string;
}

/** @throws Error naming each wrong variable and the fix. */
export function loadConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  const e = parseEnv(EnvSchema, env, "gateway");
  const { host, port } = splitHostPort(e.GATEWAY_ADDR);
  let devTokens: DevToken[] | undefined;
  if (e.GATEWAY_DEV_TOKENS_FILE) {
    try {
      devTokens = loadDevTokensFile(e.GATEWAY_DEV_TOKENS_FILE);
    } catch (err) {
      throw new InvalidConfiguration("gateway", [`GATEWAY_DEV_TOKENS_FILE: ${(err as Error).message}`]);
    }
  }
  const roleMap = e.OIDC_ROLE_MAP
    ? Object.fromEntries(e.OIDC_ROLE_MAP.split(",").map((pair) => pair.split("=") as [string, "approver"]))
    : undefined;
  return {
    host,
    port,
    approvalAddress: e.APPROVAL_ADDRESS,
    kernelAddress: e.KERNEL_ADDRESS,
    agentAddress: e.AGENT_ADDRESS,
    natsUrl: e.NATS_URL,
    natsTls: natsTls(e),
    oidc:
      e.OIDC_ISSUER && e.OIDC_AUDIENCE
        ? {
            issuer: e.OIDC_ISSUER,
            audience: e.OIDC_AUDIENCE,
            rolesClaim: e.OIDC_ROLES_CLAIM,
            scope: e.OIDC_SCOPE,
            ...(e.OIDC_CLIENT_ID ? { clientId: e.OIDC_CLIENT_ID } : {}),
            ...(e.OIDC_JWKS_URL ? { jwksUrl: e.OIDC_JWKS_URL } : {}),
            ...(roleMap ? { roleMap } : {}),
          }
        : undefined,
    devTokens,
    webDist: e.GATEWAY_WEB_DIST,
    metrics: e.METRICS_ADDR ? splitHostPort(e.METRICS_ADDR) : undefined,
    publicUrl: e.GATEWAY_PUBLIC_URL ? new URL(e.GATEWAY_PUBLIC_URL).origin : undefined,
    mcp: {
      maxSessions: e.GATEWAY_MCP_MAX_SESSIONS,
      idleMs: e.GATEWAY_MCP_IDLE_MINUTES * 60_000,
      allowedOrigins: e.GATEWAY_MCP_ALLOWED_ORIGINS?.split(",") ?? [],
    },
    drainSeconds: e.GATEWAY_DRAIN_SECONDS,
    sandboxWeakened: e.GATEHOUSE_SANDBOX_WEAKENED?.split(",").map((v) => v.trim()) ?? [],
    logLevel: e.LOG_LEVEL,
  };
}
