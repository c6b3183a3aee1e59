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
import { type GlobalOptions, run, useJsonErrors } from "./commands/shared.ts";
import { registerStoreCommands } from "./commands/store.ts";
import { registerWorkspaceCommands } from "./commands/workspace.ts";
import { GATEWAY_COMMANDS, gatewayTarget, notThroughGateway } from "./gateway.ts";

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
// Through the gateway (GATEHOUSE_GATEWAY_URL) only the commands it serves run; the others need the
// services' gRPC and say so instead of dialing a default address.
const LOCAL_COMMANDS = new Set(["dev", "store", "help"]);
program.hook("preAction", async (_program, action) => {
  const parent = action.parent && action.parent !== program ? `${action.parent.name()} ` : "";
  const name = `${parent}${action.name()}`;
  if (LOCAL_COMMANDS.has(name.split(" ")[0]!) || !process.env.GATEHOUSE_GATEWAY_URL) return;
  let refused = false;
  await run("gateway", async () => {
    gatewayTarget(); // a bad GATEHOUSE_GATEWAY_URL or a missing GATEHOUSE_TOKEN, named once here
    if (!(GATEWAY_COMMANDS as readonly string[]).includes(name)) throw notThroughGateway(name);
  }).then(() => {
    refused = process.exitCode === 1;
  });
  if (refused) process.exit(1);
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
