/** Process configuration from environment variables, validated with zod (names the wrong variable). */

import { resolve } from "node:path";
import { parseGatekeeperAddresses } from "@gatehouse/approval-core";
import { DEFAULT_ACTION_TTL_MS } from "@gatehouse/approval-core/lifecycle-contract";
import { checkStoreEnv, EVENT_STORE_URL_ENV, parseStoreUrl, storeUrlFromEnv } from "@gatehouse/event-store";
import {
  checkNatsTlsEnv,
  checkTemporalTlsEnv,
  hostPort,
  InvalidConfiguration,
  NATS_TLS_ENV,
  type NatsTlsOptions,
  natsTls,
  natsUrlField,
  parseEnv,
  splitHostPort,
  TEMPORAL_TLS_ENV,
  type TemporalSecurity,
  temporalSecurity,
} from "@gatehouse/service-kit";
import { z } from "zod";
import { parseDurationMs } from "./duration.ts";

const address = hostPort("127.0.0.1:7002");

const EnvSchema = z
  .object({
    APPROVAL_ADDR: address.default("127.0.0.1:7002"),
    GATEHOUSE_DATA_DIR: z.string().min(1, "set the directory holding events.sqlite").optional(),
    EVENT_STORE_URL: EVENT_STORE_URL_ENV,
    READ_MODEL_URL: z
      .string()
      .regex(
        /^(sqlite:.+|postgres(ql)?:\/\/.+)$/,
        "expected sqlite:<path> or postgres://user:password@host:5432/db (the read model's projection tables), or leave it unset",
      )
      .optional(),
    GATEHOUSE_CALLER_TOKEN_SECRET: z
      .string()
      .refine((s) => Buffer.byteLength(s) >= 32, "must be at least 32 bytes"),
    TEMPORAL_ADDRESS: z
      .string({ error: "set the Temporal frontend address, e.g. 127.0.0.1:7233" })
      .regex(/^[^\s:]+:\d{1,5}$/, "expected host:port of the Temporal frontend, e.g. 127.0.0.1:7233"),
    TEMPORAL_NAMESPACE: z.string().min(1, "set a namespace or leave it unset for default").default("default"),
    ...TEMPORAL_TLS_ENV,
    GATEHOUSE_ACTION_TTL: z
      .string()
      .optional()
      .refine(
        (s) => s === undefined || parseDurationMs(s) !== undefined,
        'expected a duration such as "7d", "12h", "90s" or milliseconds',
      ),
    APPLY_RUN_MAX: z.coerce
      .number({ error: "expected a whole number of actions, e.g. 100" })
      .int("expected a whole number of actions, e.g. 100")
      .min(1, "at least 1 action per run")
      .max(
        10_000,
        "at most 10000 actions per run (a retried run marks its unanswered claims outcome unknown)",
      )
      .optional(),
    /** "kind=host:port,..." — parsed (and its errors named) by parseGatekeeperAddresses below. */
    GATEKEEPER_ADDRESSES: z.string().default(""),
    METRICS_ADDR: address.optional(),
    NATS_URL: natsUrlField(
      "set NATS_URL to the NATS server(s) for live notices, or leave it unset",
    ).optional(),
    ...NATS_TLS_ENV,
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine((e, ctx) => {
    checkStoreEnv(e, ctx);
    checkTemporalTlsEnv(e, ctx);
    checkNatsTlsEnv(e, ctx);
  });

/** The validated configuration of `main.ts`. */
export interface ApprovalConfig {
  host: string;
  port: number;
  /** Event-store URL (EVENT_STORE_URL, else `sqlite:<GATEHOUSE_DATA_DIR>/events.sqlite`); may hold a password: log it redacted. */
  eventStoreUrl: string;
  /** Where the read model's tables live (READ_MODEL_URL, else readModelUrlFor); undefined = in memory. May hold a password. */
  readModelUrl: string | undefined;
  callerTokenSecret: string;
  /** Temporal frontend and namespace, with TLS/API key from TEMPORAL_TLS_* (log it via describeTemporalSecurity). */
  temporal: { address: string; namespace: string } & TemporalSecurity;
  /** Pending time-to-live of actions, in ms (GATEHOUSE_ACTION_TTL, default 7 days). */
  actionTtlMs: number;
  /** Most actions one ApplyActions run carries (APPLY_RUN_MAX); undefined: DEFAULT_APPLY_RUN_MAX (100). */
  applyRunMax: number | undefined;
  /** Gatekeeper kind -> "host:port" (GATEKEEPER_ADDRESSES), for RequestRevert's PrepareRevert. */
  gatekeepers: Record<string, string>;
  metrics: { host: string; port: number } | undefined;
  /** NATS server(s) for live change notices (NATS_URL); undefined = no notices. */
  natsUrl: string | undefined;
  /** nats.js `tls` option from tls:// URLs and NATS_TLS_*; undefined = plaintext. */
  natsTls: NatsTlsOptions | undefined;
  logLevel: string;
}

/** @throws Error naming each wrong variable and the fix. */
export function loadConfig(env: NodeJS.ProcessEnv): ApprovalConfig {
  const e = parseEnv(EnvSchema, env, "approval");
  let gatekeepers: Record<string, string>;
  try {
    gatekeepers = parseGatekeeperAddresses(e.GATEKEEPER_ADDRESSES);
  } catch (err) {
    throw new InvalidConfiguration("approval", [(err as Error).message]);
  }
  const { host, port } = splitHostPort(e.APPROVAL_ADDR);
  return {
    host,
    port,
    eventStoreUrl: storeUrlFromEnv(e) as string,
    readModelUrl: e.READ_MODEL_URL ?? readModelUrlFor(storeUrlFromEnv(e) as string, e.GATEHOUSE_DATA_DIR),
    callerTokenSecret: e.GATEHOUSE_CALLER_TOKEN_SECRET,
    temporal: { address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE, ...temporalSecurity(e) },
    actionTtlMs:
      e.GATEHOUSE_ACTION_TTL === undefined
        ? DEFAULT_ACTION_TTL_MS
        : (parseDurationMs(e.GATEHOUSE_ACTION_TTL) ?? DEFAULT_ACTION_TTL_MS),
    applyRunMax: e.APPLY_RUN_MAX,
    gatekeepers,
    metrics: e.METRICS_ADDR ? splitHostPort(e.METRICS_ADDR) : undefined,
    natsUrl: e.NATS_URL,
    natsTls: natsTls(e),
    logLevel: e.LOG_LEVEL,
  };
}

/**
 * The default home of the read model's projection tables: the event store's own database for
 * SQLite and PostgreSQL (the tables sit beside the events table); for KurrentDB, which has no
 * tables, `sqlite:<dataDir>/read-model.sqlite` when a data directory is set, else undefined (in
 * memory, rebuilt from the streams at every start).
 */
export function readModelUrlFor(eventStoreUrl: string, dataDir: string | undefined): string | undefined {
  const target = parseStoreUrl(eventStoreUrl);
  if (target.backend !== "kurrentdb") return eventStoreUrl;
  return dataDir ? `sqlite:${resolve(dataDir, "read-model.sqlite")}` : undefined;
}
