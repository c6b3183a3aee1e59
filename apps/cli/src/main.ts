#!/usr/bin/env node
/**
 * `gatehouse` — the command line of Gatehouse. Run `gatehouse --help` for the commands.
 * Every command accepts `--json` for scripts; errors print one line on stderr and exit 1.
 */
import { Command } from "commander";
import cliPackage from "../package.json" with { type: "json" };
import { registerConnectionCommands } from "./commands/connections.ts";
import { registerDevCommand } from "./commands/dev.ts";
import { registerMcpCommand } from "./commands/mcp.ts";
import { registerMemberCommands } from "./commands/members.ts";
import { registerObserverCommands } from "./commands/observers.ts";
import { registerPeopleCommands } from "./commands/people.ts";
import { registerReviewCommand } from "./commands/review.ts";
import { type GlobalOptions, useJsonErrors } from "./commands/shared.ts";
import { registerStoreCommands } from "./commands/store.ts";
import { registerWorkspaceCommands } from "./commands/workspace.ts";

const program = new Command();
program
  .name("gatehouse")
  .description("Agents work on real systems; people approve the writes.")
  .version(cliPackage.version, "--version", "print the version")
  .option("--json", "print machine-readable JSON")
  // `gatehouse approve --help` lists --json too.
  .configureHelp({ showGlobalOptions: true })
  .showHelpAfterError()
  .exitOverride((err) => {
    process.exit(err.exitCode === 0 ? 0 : 2);
  });

// `--json` may stand anywhere on the line (`gatehouse actions ws --json` as well as `gatehouse --json actions ws`).
const args = process.argv.slice(2);
const jsonAnywhere = args.includes("--json");
const globals = (): GlobalOptions => ({ json: jsonAnywhere || !!program.opts().json });
useJsonErrors(jsonAnywhere);
// `gatehouse log ws | head` closes the pipe early: that is not an error.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});
registerDevCommand(program);
registerWorkspaceCommands(program, globals);
registerPeopleCommands(program, globals);
registerReviewCommand(program, globals);
registerObserverCommands(program, globals);
registerMcpCommand(program);
registerConnectionCommands(program, globals);
registerMemberCommands(program, globals);
registerStoreCommands(program, globals);

await program.parseAsync(
  args.filter((a) => a !== "--json"),
  { from: "user" },
);
