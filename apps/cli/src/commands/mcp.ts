/**
 * `gatehouse mcp --workspace <id>`: serves one workspace to an MCP client over stdio (the client
 * spawns this command). stdout carries the protocol only; notes go to stderr. One process is one
 * chat: its id is a fresh UUID, and the kernel stamps every execution `agent:<chat id>`. The chat
 * is recorded as started by the CLI's person (user:$GATEHOUSE_USER, else user:$USER), surface
 * "mcp-stdio", before the protocol starts.
 */
import type { Command } from "commander";
import { run } from "./shared.ts";

export function registerMcpCommand(program: Command): void {
  program
    .command("mcp")
    .description(
      "serve a workspace to an MCP client over stdio (tools execute_code, wait_for_decisions and request_connection); stdout is the protocol",
    )
    .requiredOption("--workspace <id>", "the workspace the agent works in (gatehouse workspace list)")
    .action((opts: { workspace: string }) =>
      run("kernel", async () => (await import("./mcp-serve.ts")).serveStdio(opts.workspace)),
    );
}
