/**
 * Reading an administrator's YAML configuration file (a gatekeeper's registry of servers or
 * remotes), shared by the gatekeepers so each reports an unreadable or malformed file the same way:
 * the file's path, the system error code, the setting that names the file, and the YAML parser's
 * own message with its line and column. Validation of the document stays with each gatekeeper.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";

/** What `readYamlConfigFile` needs to word its errors. */
export interface YamlConfigFileOptions {
  /** What the file is, for messages, e.g. `postgres registry file`. */
  what: string;
  /** The setting that names the file (e.g. `GATEKEEPER_POSTGRES_REGISTRY`), added as the fix. */
  setting?: string;
  /** Builds the gatekeeper's own error type from a message. */
  fail: (message: string) => Error;
}

/**
 * Reads and parses a YAML file.
 * @returns the parsed document; `{}` for an empty file (validation is the caller's).
 * @throws the error `opts.fail` builds, naming the path, when the file cannot be read (with the
 *   system code, e.g. ENOENT, EACCES) or is not valid YAML (with the parser's message and position).
 */
export function readYamlConfigFile(path: string, opts: YamlConfigFileOptions): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    const why =
      code === "ENOENT" ? "ENOENT: no such file" : code === "EACCES" ? "EACCES: permission denied" : code;
    throw opts.fail(
      `cannot read ${opts.what} ${path} (${why})${opts.setting ? `; check ${opts.setting}` : ""}`,
    );
  }
  try {
    return parseYaml(text) ?? {};
  } catch (err) {
    throw opts.fail(`${opts.what} ${path} is not valid YAML: ${(err as Error).message}`);
  }
}
