/**
 * `gatehouse connections <ws> [--state pending]`: the workspace's connection requests (an agent
 * asked for a resource); `gatehouse connections accept <ws> <id> [--url …] [--name …]` introduces
 * the resource (optionally with a narrower scope fragment), `gatehouse connections decline <ws> <id>
 * --reason "…"` declines. Talks to the kernel's Connections service.
 */
import type { ConnectionRequest } from "@gatehouse/proto";
import Table from "cli-table3";
import type { Command } from "commander";
import { call, connectionsClient } from "../clients.ts";
import { emit, terminalSafe } from "../output.ts";
import { type GlobalOptions, parseId, run, who } from "./shared.ts";

const STATES = ["pending", "accepted", "declined"];

/** One line: invisible characters as tokens, whitespace runs as one space, at most `n` characters. */
function cell(s: string, n = 200): string {
  const one = terminalSafe(s).replace(/\s+/g, " ");
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

/** The outcome column: "FILES mcp://…" once accepted, "by x: reason" once declined. */
function outcome(r: ConnectionRequest): string {
  if (r.state === "accepted") return `${r.binding} ${r.acceptedUrl} (by ${r.decidedBy})`;
  if (r.state === "declined") return `by ${r.decidedBy}: ${r.declineReason}`;
  return "";
}

/** A table of requests for people. */
export function connectionsTable(requests: ConnectionRequest[]): string {
  if (requests.length === 0) return "no connection requests";
  const t = new Table({
    head: ["id", "state", "url", "asked by", "reason", "outcome"],
    style: { head: [], border: [] },
  });
  for (const r of requests) {
    const caller = r.caller ? `${r.caller.kind}${r.caller.id ? `:${r.caller.id}` : ""}` : "";
    t.push([
      String(r.requestId),
      r.state,
      cell(r.url, 60),
      cell(caller, 30),
      cell(r.reason, 60),
      cell(outcome(r), 60),
    ]);
  }
  return t.toString();
}

function checkBy(by: string): string {
  if (!/^user:\S/.test(by)) throw new Error(`--by must be "user:<id>", e.g. --by user:alice (got "${by}")`);
  return by;
}

/** Registers `connections`, `connections accept` and `connections decline`. */
export function registerConnectionCommands(program: Command, globals: () => GlobalOptions): void {
  const connections = program
    .command("connections")
    .description("connection requests (an agent asked for a resource): list, accept, decline")
    .argument("<workspace>")
    .option("--state <state>", `only requests in this state: ${STATES.join(", ")}`)
    .action((ws: string, opts: { state?: string }) =>
      run("kernel", async () => {
        if (opts.state !== undefined && !STATES.includes(opts.state))
          throw new Error(`--state must be one of ${STATES.join(", ")} (got "${opts.state}")`);
        const c = connectionsClient();
        const res = await call(c, c.listConnectionRequests, { workspaceId: ws, state: opts.state ?? "" });
        emit(globals().json, res.requests, () => connectionsTable(res.requests));
      }),
    );
  connections
    .command("accept <workspace> <id>")
    .description("accept a request: introduce the resource (as `connect` does) and print its binding")
    .option(
      "--url <url>",
      "the requested URL with a scope fragment of your choice, e.g. a narrower #tool= list",
    )
    .option("--name <binding>", "binding name (env.<NAME>); default: the gatekeeper's")
    .option("--by <person>", 'who accepts, "user:<id>" (default: user:$GATEHOUSE_USER or user:$USER)')
    .action((ws: string, id: string, opts: { url?: string; name?: string; by?: string }) =>
      run("kernel", async () => {
        const requestId = parseId(id, "<id>");
        const c = connectionsClient();
        const r = await call(c, c.decideConnectionRequest, {
          workspaceId: ws,
          requestId,
          accept: true,
          url: opts.url ?? "",
          name: opts.name ?? "",
          decidedBy: checkBy(opts.by ?? who("--by")),
          reason: "",
        });
        emit(globals().json, r, () => `${r.binding}\t${r.acceptedUrl}`);
      }),
    );
  connections
    .command("decline <workspace> <id>")
    .description("decline a request; the agent reads the reason")
    .requiredOption("--reason <text>", "why (required)")
    .option("--by <person>", 'who declines, "user:<id>" (default: user:$GATEHOUSE_USER or user:$USER)')
    .action((ws: string, id: string, opts: { reason: string; by?: string }) =>
      run("kernel", async () => {
        const requestId = parseId(id, "<id>");
        if (!opts.reason.trim())
          throw new Error('--reason is required: say why, e.g. --reason "use the staging copy"');
        const c = connectionsClient();
        const r = await call(c, c.decideConnectionRequest, {
          workspaceId: ws,
          requestId,
          accept: false,
          url: "",
          name: "",
          decidedBy: checkBy(opts.by ?? who("--by")),
          reason: opts.reason,
        });
        emit(globals().json, r, () => `declined connection request ${r.requestId}`);
      }),
    );
}
