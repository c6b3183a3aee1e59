/** Helpers shared by the CLI commands. */
import { status } from "@grpc/grpc-js";
import ms from "ms";
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

/**
 * The person at the terminal: "user:" + $GATEHOUSE_USER, else "user:" + $USER (empty values count
 * as unset). Decisions and ownership always name a real person, never a made-up one.
 * `flag` is the command's option that names the person instead ("--by", "--owner"), for the hint;
 * omit it for a command that has none (then the hint asks for GATEHOUSE_USER only).
 * @throws Error when neither variable is set, asking to set GATEHOUSE_USER or, when the command
 *   has one, to pass `flag`.
 */
export function who(flag?: string): string {
  const name = process.env.GATEHOUSE_USER || process.env.USER;
  if (!name) {
    const fix = flag
      ? `set GATEHOUSE_USER or pass ${flag} user:<name>`
      : "set GATEHOUSE_USER=<name> (this command has no flag for it)";
    throw new Error(`no person to record: neither GATEHOUSE_USER nor USER is set; ${fix}`);
  }
  return `user:${name}`;
}

/** Parses a non-negative integer argument or throws naming the argument. */
export function parseId(value: string, what: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new Error(`${what} must be a non-negative integer below 2^53, got "${value}"`);
  }
  return Number(value);
}

/**
 * Parses a duration flag to milliseconds: a number with a unit — "500ms", "30s", "2m", "1.5h" (the
 * forms of the `ms` package), greater than 0. With `bareUnit` (a flag that took bare numbers before
 * durations took units), a bare number is still read in that unit, with a note on stderr that bare
 * numbers are deprecated; without it, a bare number is refused.
 * @throws Error naming the flag and what it accepts.
 */
export function parseDuration(value: string, flag: string, bareUnit?: "ms" | "s"): number {
  const text = value.trim();
  const refuse = () =>
    new Error(`${flag} must be a positive duration with a unit, e.g. 500ms, 30s or 2m (got "${value}")`);
  let millis: number;
  if (/^\d+(\.\d+)?$/.test(text)) {
    if (!bareUnit || Number(text) <= 0) throw refuse();
    millis = Number(text) * (bareUnit === "s" ? 1000 : 1);
    process.stderr.write(
      `gatehouse: ${flag} ${text} has no unit and is read as ${text} ${bareUnit}; write ${text}${bareUnit} (bare numbers are deprecated)\n`,
    );
  } else {
    millis = /^\d/.test(text)
      ? ((ms(text as ms.StringValue) as number | undefined) ?? Number.NaN)
      : Number.NaN;
  }
  if (!Number.isFinite(millis) || millis <= 0) throw refuse();
  return Math.round(millis);
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
