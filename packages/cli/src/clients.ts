/**
 * gRPC clients the CLI talks to, with addresses from the environment or the running
 * `gatehouse dev` (which writes `<data dir>/dev.json`):
 *   GATEHOUSE_KERNEL_ADDRESS    default: dev.json's kernel, else 127.0.0.1:7001
 *   GATEHOUSE_APPROVAL_ADDRESS  default: dev.json's approval, else 127.0.0.1:7002
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DecisionsClient, KernelClient } from "@gatehouse/proto";
import { callUnary } from "@gatehouse/service-kit";
import { credentials, type ServiceError } from "@grpc/grpc-js";

export interface Addresses {
  kernel: string;
  approval: string;
}

/** Where `gatehouse dev` keeps its data (GATEHOUSE_DATA_DIR, default ./.gatehouse). */
export function dataDir(): string {
  return process.env.GATEHOUSE_DATA_DIR ?? ".gatehouse";
}

/** Resolves the service addresses (env first, then dev.json, then defaults). */
export function addresses(): Addresses {
  let dev: Partial<Addresses> = {};
  const file = join(dataDir(), "dev.json");
  if (existsSync(file)) {
    try {
      dev = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      dev = {};
    }
  }
  return {
    kernel: process.env.GATEHOUSE_KERNEL_ADDRESS ?? dev.kernel ?? "127.0.0.1:7001",
    approval: process.env.GATEHOUSE_APPROVAL_ADDRESS ?? dev.approval ?? "127.0.0.1:7002",
  };
}

export function kernelClient(): KernelClient {
  return new KernelClient(addresses().kernel, credentials.createInsecure());
}

export function decisionsClient(): DecisionsClient {
  return new DecisionsClient(addresses().approval, credentials.createInsecure());
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
    if (e.details && !/No connection established/i.test(e.details)) {
      return `the ${service} service at ${where} stopped answering during the call (${e.details}); it may have partly taken effect — check with \`gatehouse actions <workspace>\` once it runs again`;
    }
    return `cannot reach the ${service} service at ${where}; start it with \`gatehouse dev\` or set GATEHOUSE_${service.toUpperCase()}_ADDRESS`;
  }
  if (e.code === 4) return `the ${service} service did not answer in time`;
  return e.details || (err instanceof Error ? err.message : String(err));
}
