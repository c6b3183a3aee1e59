/**
 * `gatehouse observer add <workspace> <person> --credential-file <file>`: let a person observe a
 * workspace (Kernel.AddObserver). Every binding's gatekeeper checks the person with THEIR OWN
 * credential for that binding's system; credentials come from a file, never from the command
 * line (where `ps` and shell history would show them), and are never printed.
 *
 * The credential file is JSON: `{"REPO": "alice:ghp_...", "MEMORY": "-"}` — one entry per binding
 * of the workspace (`gatehouse bindings <ws>` lists them); a binding whose gatekeeper needs no
 * credential still needs an entry (any non-empty string).
 */
import { readFileSync, statSync } from "node:fs";
import type { Command } from "commander";
import { call, kernelClient } from "../clients.ts";
import { emit } from "../output.ts";
import { personArg } from "./members.ts";
import { type GlobalOptions, who as me, run } from "./shared.ts";

/**
 * Reads a credential file: a JSON object mapping binding names to non-empty strings.
 * Error messages name the file and the offending key but never quote the file's content
 * (JSON.parse's own message can show a piece of it, so it is not passed on).
 * @throws Error when the file cannot be read, is not JSON, or has the wrong shape.
 */
export function readCredentialFile(file: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(
      `cannot read --credential-file "${file}" (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(
      `--credential-file "${file}" is not JSON; write {"BINDING": "credential", ...}, one entry per binding`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`--credential-file "${file}" must hold a JSON object {"BINDING": "credential", ...}`);
  }
  const out: Record<string, string> = {};
  for (const [binding, credential] of Object.entries(value)) {
    if (typeof credential !== "string" || credential === "") {
      throw new Error(
        `--credential-file "${file}": the value for "${binding.slice(0, 64)}" must be a non-empty string`,
      );
    }
    out[binding] = credential;
  }
  return out;
}

/** Warns (stderr) when other users may read the credential file. */
function warnIfShared(file: string): void {
  try {
    if (process.platform !== "win32" && (statSync(file).mode & 0o077) !== 0) {
      process.stderr.write(
        `gatehouse: warning: ${file} is readable by other users; restrict it with chmod 600\n`,
      );
    }
  } catch {
    // readCredentialFile reports an unreadable file.
  }
}

/** Registers `observer add`. */
export function registerObserverCommands(program: Command, globals: () => GlobalOptions): void {
  const observer = program.command("observer").description("let people observe a workspace");
  observer
    .command("add <workspace> <person>")
    .description(
      "let <person> (user:<id> or <id>) observe the workspace, if every binding's gatekeeper allows it with their own credentials",
    )
    .requiredOption(
      "--credential-file <file>",
      'JSON {"BINDING": "credential", ...}: the person\'s own credential for each binding (checked once, never stored)',
    )
    .option("--by <user>", "who shares the workspace (user:<id>); default user:$GATEHOUSE_USER or $USER")
    .action((ws: string, who: string, opts: { credentialFile: string; by?: string }) =>
      run("kernel", async () => {
        const credentials = readCredentialFile(opts.credentialFile);
        warnIfShared(opts.credentialFile);
        const k = kernelClient();
        const req = {
          workspaceId: ws,
          observer: personArg(who, "<person>"),
          credentials,
          addedBy: personArg(opts.by ?? me(), "--by"),
        };
        const res = await call(k, k.addObserver, req);
        emit(globals().json, { workspaceId: ws, observer: req.observer, checks: res.checks }, () => {
          const rows = Object.entries(res.checks)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([binding, finding]) => `  ${binding}\t${finding}`);
          return [`${req.observer} may now observe ${ws}`, ...rows].join("\n");
        });
      }),
    );
}
