/** Helpers shared by the CLI commands. */
import { status } from "@grpc/grpc-js";
import { describeGrpcError } from "../clients.ts";
import { terminalSafe } from "../output.ts";

const GRPC_CODE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(status)
    .filter(([, v]) => typeof v === "number")
    .map(([k, v]) => [v as number, k]),
);

export interface GlobalOptions {
  json: boolean;
}

let jsonErrors = false;

/** With `--json`, errors are printed on stderr as `{"error": {"code", "message"}}`. */
export function useJsonErrors(on: boolean): void {
  jsonErrors = on;
}

/** Parses a non-negative integer argument or throws naming the argument. */
export function parseId(value: string, what: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new Error(`${what} must be a non-negative integer below 2^53, got "${value}"`);
  }
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
    const message = describeGrpcError(err, service);
    if (jsonErrors) {
      const code = (err as { code?: unknown }).code;
      const name = typeof code === "number" ? (GRPC_CODE_NAMES[code] ?? String(code)) : "CLI";
      process.stderr.write(`${JSON.stringify({ error: { code: name, message } })}\n`);
    } else {
      process.stderr.write(`gatehouse: ${terminalSafe(message)}\n`);
    }
    process.exitCode = 1;
  }
}
