/** Helpers shared by the CLI commands. */
import { describeGrpcError } from "../clients.ts";

export interface GlobalOptions {
  json: boolean;
}

/** Parses a non-negative integer argument or throws naming the argument. */
export function parseId(value: string, what: string): number {
  if (!/^\d+$/.test(value)) throw new Error(`${what} must be a non-negative integer, got "${value}"`);
  return Number(value);
}

/**
 * Runs a command body; errors print one clear line on stderr and set exit code 1
 * (2 for usage errors thrown before any call).
 */
export async function run(service: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    process.stderr.write(`gatehouse: ${describeGrpcError(err, service)}\n`);
    process.exitCode = 1;
  }
}
