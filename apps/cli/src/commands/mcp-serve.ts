/**
 * The body of `gatehouse mcp` (see mcp.ts): the MCP server over stdio. Loaded only by that command,
 * so the MCP SDK does not slow down the others.
 */
import { randomUUID } from "node:crypto";
import { createAgentMcpServer } from "@gatehouse/agent-mcp";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import pino from "pino";
import { call, kernelClient } from "../clients.ts";
import { personArg } from "./members.ts";
import { who } from "./shared.ts";

/** Largest JSON-RPC message read from stdin, bytes. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * What the stdio transport could not take (it drops the line and reads on): one line on stderr
 * naming the problem, and for a line that is not JSON (-32700) or not a JSON-RPC message (-32600)
 * an error response without id (the form MCP's schema gives an answer to an unidentifiable request).
 */
function reportTransportError(transport: StdioServerTransport, err: Error): void {
  const code = err instanceof SyntaxError ? -32700 : err.name === "ZodError" ? -32600 : undefined;
  if (code === undefined) {
    process.stderr.write(`gatehouse mcp: the stdio transport failed: ${err.message}\n`);
    return;
  }
  const problem =
    code === -32700
      ? `Parse error: a line on stdin is not JSON (${err.message.slice(0, 200)})`
      : "Invalid Request: a line on stdin is JSON but not a JSON-RPC 2.0 message";
  const message = `${problem}; send one JSON-RPC message per line`;
  process.stderr.write(`gatehouse mcp: ${message}\n`);
  void transport.send({ jsonrpc: "2.0", error: { code, message } });
}

/** Serves the workspace until stdin ends (the client went away) or SIGINT/SIGTERM. */
export async function serveStdio(workspaceId: string): Promise<void> {
  // stdout is the protocol: console output from anything in this process goes to stderr.
  for (const level of ["log", "info", "debug"] as const) console[level] = console.error;
  const startedBy = personArg(who(), "GATEHOUSE_USER");
  const kernel = kernelClient();
  // Fails here, before any protocol traffic, for an unknown workspace or an unreachable kernel.
  await call(kernel, kernel.describeBindings, { workspaceId }, 30_000);
  const chatId = randomUUID();
  const logger = pino({ level: process.env.GATEHOUSE_LOG_LEVEL ?? "warn" }, pino.destination(2));
  const session = createAgentMcpServer({
    kernel,
    workspaceId,
    chatId,
    startedBy,
    surface: "mcp-stdio",
    logger,
  });
  await session.ready;
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= session.close().finally(() => kernel.close());
    return stopped;
  };
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  // A message larger than the read buffer closes the transport; with 64 MiB, an oversized snippet
  // reaches execute_code, which refuses it naming its 512 KiB limit (the SDK's default is 10 MiB).
  const transport = new StdioServerTransport(process.stdin, process.stdout, {
    maxBufferSize: MAX_MESSAGE_BYTES,
  });
  transport.onerror = (err) => reportTransportError(transport, err);
  await session.server.connect(transport);
  process.stderr.write(
    `gatehouse mcp: serving workspace ${workspaceId} over stdio as chat ${chatId} started by ${startedBy} (its executions are stamped agent:${chatId})\n`,
  );
  await ended;
  await stop();
}
