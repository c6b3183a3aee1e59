/**
 * gRPC clients the CLI talks to, with addresses from the environment or the running
 * `gatehouse dev` (which writes `<data dir>/dev.json`):
 *   GATEHOUSE_KERNEL_ADDRESS    default: dev.json's kernel, else 127.0.0.1:7001
 *   GATEHOUSE_APPROVAL_ADDRESS  default: dev.json's approval, else 127.0.0.1:7002
 * The defaults apply only while GATEHOUSE_DATA_DIR is unset: a data dir named explicitly whose
 * dev.json is missing is an error (see `serviceAddress`), never the default, which may be another stack.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ConnectionsClient, DecisionsClient, KernelClient } from "@gatehouse/proto";
import { callUnary } from "@gatehouse/service-kit";
import { credentials, type ServiceError } from "@grpc/grpc-js";
import { cliWording } from "./error-text.ts";

export interface Addresses {
  kernel: string;
  approval: string;
}

/** Where `gatehouse dev` keeps its data (GATEHOUSE_DATA_DIR, default ./.gatehouse). */
export function dataDir(): string {
  return process.env.GATEHOUSE_DATA_DIR || ".gatehouse";
}

const DEFAULTS: Addresses = { kernel: "127.0.0.1:7001", approval: "127.0.0.1:7002" };

/** The variable that names a service's address: GATEHOUSE_KERNEL_ADDRESS, GATEHOUSE_APPROVAL_ADDRESS. */
function addressVariable(service: keyof Addresses): string {
  return `GATEHOUSE_${service.toUpperCase()}_ADDRESS`;
}

/**
 * `<data dir>/dev.json` as an absolute path, and its addresses when it exists and parses
 * (`dev` is undefined otherwise).
 */
function devFile(): { file: string; dev: (Partial<Addresses> & { pid?: number }) | undefined } {
  const file = resolve(dataDir(), "dev.json");
  if (!existsSync(file)) return { file, dev: undefined };
  try {
    return { file, dev: JSON.parse(readFileSync(file, "utf8")) };
  } catch {
    return { file, dev: undefined };
  }
}

/**
 * Resolves the service addresses (env first, then dev.json, then defaults), for messages: it never
 * throws, so a data dir without dev.json shows the default here; the clients dial `serviceAddress`.
 */
export function addresses(): Addresses {
  const { dev } = devFile();
  return {
    kernel: process.env[addressVariable("kernel")] || dev?.kernel || DEFAULTS.kernel,
    approval: process.env[addressVariable("approval")] || dev?.approval || DEFAULTS.approval,
  };
}

/**
 * The "host:port" the CLI dials for a service: its variable (GATEHOUSE_KERNEL_ADDRESS /
 * GATEHOUSE_APPROVAL_ADDRESS) when set, else the address in `<data dir>/dev.json`, else — only when
 * GATEHOUSE_DATA_DIR is unset — the default 127.0.0.1:7001 / 7002.
 * @throws Error when GATEHOUSE_DATA_DIR is set and its dev.json is missing or holds no address for
 *   the service (the variable unset), naming the directory and the fixes: start `gatehouse dev` with
 *   that GATEHOUSE_DATA_DIR, correct the path, or set the address variable.
 */
export function serviceAddress(service: keyof Addresses): string {
  const variable = addressVariable(service);
  const fromVariable = process.env[variable];
  if (fromVariable) return fromVariable;
  const { file, dev } = devFile();
  if (dev?.[service]) return dev[service];
  const given = process.env.GATEHOUSE_DATA_DIR;
  if (!given) return DEFAULTS[service];
  const dir = resolve(given);
  const named = dir === given ? dir : `${given} (${dir})`;
  const problem = !existsSync(dir)
    ? `the directory ${named} does not exist`
    : !existsSync(file)
      ? `there is no ${file}`
      : `${file} holds no ${service} address`;
  throw new Error(
    `GATEHOUSE_DATA_DIR is set to ${named}, but ${problem} (a running \`gatehouse dev\` writes its addresses to dev.json there), ` +
      `so the CLI does not know where the ${service} service listens; it does not fall back to the default ${DEFAULTS[service]}, ` +
      "which may be another stack (the default applies only while GATEHOUSE_DATA_DIR is unset): " +
      `start \`gatehouse dev\` with GATEHOUSE_DATA_DIR=${given}, correct GATEHOUSE_DATA_DIR to the directory of the gatehouse dev you mean, ` +
      `or set ${variable} (and ${addressVariable(service === "kernel" ? "approval" : "kernel")}) to the services' addresses`,
  );
}

/**
 * Where the CLI took a service's address from, for the "cannot reach" hint: the variable, the
 * dev.json it read, or the default — naming the data dir it looked in and GATEHOUSE_DATA_DIR,
 * since a `gatehouse dev` started with another GATEHOUSE_DATA_DIR writes its dev.json elsewhere.
 */
export function unreachableHint(service: keyof Addresses): string {
  const variable = addressVariable(service);
  const where = addresses()[service];
  const dirNote = process.env.GATEHOUSE_DATA_DIR
    ? `GATEHOUSE_DATA_DIR=${process.env.GATEHOUSE_DATA_DIR}`
    : "GATEHOUSE_DATA_DIR is unset, so ./.gatehouse";
  if (process.env[variable]) {
    return `cannot reach the ${service} service at ${where} (from ${variable}); start it, or correct ${variable}`;
  }
  const { file, dev } = devFile();
  if (dev?.[service]) {
    return (
      `cannot reach the ${service} service at ${where}, the address in ${file} (${dirNote}); ` +
      `the gatehouse dev that wrote it${dev.pid ? ` (pid ${dev.pid})` : ""} is not answering: start \`gatehouse dev\` again with the same GATEHOUSE_DATA_DIR, or set ${variable}`
    );
  }
  return (
    `cannot reach the ${service} service at ${where} (the default: there is no ${file}; ${dirNote}); ` +
    "start `gatehouse dev`, or, if it runs with GATEHOUSE_DATA_DIR set, set the same GATEHOUSE_DATA_DIR here " +
    `(the CLI reads the addresses from <data dir>/dev.json), or set ${variable}`
  );
}

/**
 * Largest response the CLI accepts, bytes: 256 MiB instead of gRPC's default 4 MiB. A workspace's
 * action log is one ListActions/GetLog message; 5,000 actions with diff previews pass 4 MiB, and
 * the CLI asked for the whole log, so it takes it (the services send without a limit).
 */
export const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

const CLIENT_OPTIONS = { "grpc.max_receive_message_length": MAX_RESPONSE_BYTES };

export function kernelClient(): KernelClient {
  return new KernelClient(serviceAddress("kernel"), credentials.createInsecure(), CLIENT_OPTIONS);
}

/** The kernel process's Connections service (connection requests), at the kernel's address. */
export function connectionsClient(): ConnectionsClient {
  return new ConnectionsClient(serviceAddress("kernel"), credentials.createInsecure(), CLIENT_OPTIONS);
}

export function decisionsClient(): DecisionsClient {
  return new DecisionsClient(serviceAddress("approval"), credentials.createInsecure(), CLIENT_OPTIONS);
}

/**
 * Calls a unary method with a deadline (ms, default 60 s) and resolves its response.
 * @throws the ServiceError; `describeGrpcError` turns it into a sentence.
 */
export const call = callUnary;

/** A one-line explanation of a gRPC error for people, with the fix when the service is down. */
export function describeGrpcError(err: unknown, service: string): string {
  const e = err as Partial<ServiceError>;
  if (e.code === 14) {
    const where = (addresses() as unknown as Record<string, string>)[service] ?? "its address";
    // The service itself answered UNAVAILABLE (e.g. its event store is down): its message already says
    // what was recorded, so pass it on instead of guessing that the call partly took effect.
    if (e.details && /retry the request/.test(e.details)) {
      return `the ${service} service at ${where} cannot do this now: ${cliWording(e.details)}`;
    }
    if (e.details && !/No connection established/i.test(e.details)) {
      return `the ${service} service at ${where} stopped answering during the call (${e.details}); it may have partly taken effect — check with \`gatehouse actions <workspace>\` once it runs again`;
    }
    return service === "kernel" || service === "approval"
      ? unreachableHint(service)
      : `cannot reach the ${service} service at ${where}; start it with \`gatehouse dev\``;
  }
  if (e.code === 4) return `the ${service} service did not answer in time`;
  if (e.details) return cliWording(e.details);
  return err instanceof Error ? err.message : String(err);
}
