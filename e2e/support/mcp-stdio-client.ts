/**
 * The MCP SDK's own Client over its StdioClientTransport, spawning the real `gatehouse mcp
 * --workspace <id>` against a test harness's services (for the stdio MCP suites).
 */
import { resolve } from "node:path";
import { waitUntil } from "@gatehouse/service-kit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Harness } from "./harness.ts";

const CLI = resolve(import.meta.dirname, "../../apps/cli/src/main.ts");

export interface StdioSession {
  client: Client;
  transport: StdioClientTransport;
  /** The chat id `gatehouse mcp` printed on stderr. */
  chatId: string;
  /** How many notifications/tools/list_changed arrived so far. */
  listChanged(): number;
  /** Everything the server wrote on stderr so far. */
  stderr(): string;
  /** True once close() was called. */
  closed: boolean;
  close(): Promise<void>;
}

/** Spawns `gatehouse mcp --workspace ws` and connects the SDK Client to it. */
export async function connectStdio(h: Harness, ws: string): Promise<StdioSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--no-node-snapshot", "--import", "tsx", CLI, "mcp", "--workspace", ws],
    env: {
      ...(process.env as Record<string, string>),
      GATEHOUSE_KERNEL_ADDRESS: h.stack.addresses.kernel,
      GATEHOUSE_APPROVAL_ADDRESS: h.stack.addresses.approval,
      // The person the session acts for (a test may set its own): gatehouse mcp refuses without one,
      // and CI has no USER.
      GATEHOUSE_USER: process.env.GATEHOUSE_USER || "dev-approver",
    },
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    err += chunk.toString("utf8");
  });
  const client = new Client({ name: "gatehouse-test", version: "0.0.0" });
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed++;
  });
  await client.connect(transport, { timeout: 120_000 });
  const chatId = await waitUntil("gatehouse mcp's chat id on stderr", () => /as chat (\S+) /.exec(err)?.[1]);
  const session: StdioSession = {
    client,
    transport,
    chatId,
    listChanged: () => changed,
    stderr: () => err,
    closed: false,
    close() {
      session.closed = true;
      return client.close();
    },
  };
  return session;
}
