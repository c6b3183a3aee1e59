/**
 * The Gatehouse k6 test harness's command line — runs a k6 script's scenarios on Node for the
 * project's tests (the k6 binary is not used on these machines); SREs run the same scripts with k6.
 *
 *   node --import tsx loadtests/harness/cli.ts run [-e NAME=value]... [--summary-export file]
 *        [--out json=file] script.js
 *
 * Flags are k6's: -e/--env adds to __ENV (which starts as the process environment, as with `k6 run`),
 * --summary-export writes the summary as JSON, --out json= writes every sample as a JSON line. Exit codes
 * are k6's: 0, 99 (a threshold failed), 104 (an option or API the harness does not implement, or an
 * invalid one), 107 (the script's init context or setup() threw).
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { HarnessConfigError, ScriptError } from "./controller/errors.ts";
import { runScript } from "./controller/run.ts";

const USAGE = "usage: cli.ts run [-e NAME=value]... [--summary-export file] [--out json=file] script.js";

/** Parsed command line. @throws HarnessConfigError naming the bad argument. */
export function parseArgs(argv: string[]): {
  script: string;
  env: Record<string, string>;
  summaryExport?: string;
  outJson?: string;
} {
  const [cmd, ...rest] = argv;
  if (cmd !== "run") throw new HarnessConfigError(`unknown command "${cmd ?? ""}"; ${USAGE}`);
  const env: Record<string, string> = {};
  let script: string | undefined;
  let summaryExport: string | undefined;
  let outJson: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    const value = () => {
      const v = a.includes("=") && a.startsWith("--") ? a.slice(a.indexOf("=") + 1) : rest[++i];
      if (v === undefined) throw new HarnessConfigError(`${a} needs a value; ${USAGE}`);
      return v;
    };
    if (a === "-e" || a === "--env" || a.startsWith("--env=")) {
      const kv = value();
      const eq = kv.indexOf("=");
      if (eq < 1) throw new HarnessConfigError(`-e takes NAME=value, got "${kv}"`);
      env[kv.slice(0, eq)] = kv.slice(eq + 1);
    } else if (a === "--summary-export" || a.startsWith("--summary-export=")) summaryExport = value();
    else if (a === "--out" || a === "-o" || a.startsWith("--out=")) {
      const o = value();
      if (!o.startsWith("json="))
        throw new HarnessConfigError(`--out ${o}: the harness writes only json=<file>`);
      outJson = o.slice(5);
    } else if (a.startsWith("-"))
      throw new HarnessConfigError(`flag ${a} is not implemented by the Gatehouse k6 test harness; ${USAGE}`);
    else if (script === undefined) script = a;
    else throw new HarnessConfigError(`one script at a time; got "${script}" and "${a}"`);
  }
  if (!script) throw new HarnessConfigError(`name the script; ${USAGE}`);
  return {
    script: resolve(script),
    env,
    ...(summaryExport ? { summaryExport } : {}),
    ...(outJson ? { outJson } : {}),
  };
}

async function main(): Promise<number> {
  try {
    const args = parseArgs(process.argv.slice(2));
    const env = { ...(process.env as Record<string, string>), ...args.env };
    const result = await runScript({
      script: args.script,
      env,
      ...(args.outJson ? { outJson: args.outJson } : {}),
    });
    process.stdout.write(`\n${result.text}\n`);
    if (args.summaryExport) writeFileSync(args.summaryExport, `${JSON.stringify(result.json, null, 2)}\n`);
    return result.exitCode;
  } catch (err) {
    if (err instanceof HarnessConfigError || err instanceof ScriptError) {
      process.stderr.write(`harness: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`harness: ${(err as Error).stack ?? err}\n`);
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  main().then((code) => process.exit(code));
