/**
 * createAgentMcpServer: one MCP session = one chat of one workspace. The caller connects
 * `session.server` to a transport (stdio in `gatehouse mcp`, Streamable HTTP in the gateway).
 */
import { ConnectionsClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { BindingsWatch } from "./bindings-watch.ts";
import { describeBindings, startChat } from "./kernel-calls.ts";
import { kernelErrorText } from "./kernel-errors.ts";
import type { AgentMcpLogger, AgentMcpOptions, ToolContext } from "./options.ts";
import { installTools } from "./tool-registry.ts";
import { AGENT_TOOLS } from "./tools/index.ts";

/** A running session: the MCP server to connect, and how to end it. */
export interface AgentMcpSession {
  /** Connect it to one transport: `await session.server.connect(transport)`. */
  server: McpServer;
  /**
   * Resolves once the session has read the workspace's bindings, recorded its ChatStarted
   * (Kernel.StartChat, once per session) and watches the bindings; rejects with a sentence naming
   * the workspace when it does not exist, the chat cannot be recorded or the kernel cannot be
   * reached (the next `tools/list` or `tools/call` tries again; no tool runs before the chat is
   * recorded). `tools/list` waits for the watch too, so a binding change after a listing is never
   * missed.
   */
  ready: Promise<void>;
  /** Stops the bindings watch and closes the server (and its transport). Idempotent. */
  close(): Promise<void>;
}

const INSTRUCTIONS =
  "Gatehouse runs your TypeScript against this workspace's systems in a sandbox: call execute_code. " +
  "Reads are logged; writes wait for a person's approval (simulated ones show in your later reads; " +
  "awaited ones suspend the turn: call wait_for_decisions with the turn id execute_code returns). " +
  "To work on a system the workspace lacks, ask a person with request_connection.";

const silent: AgentMcpLogger = { info() {}, warn() {}, error() {} };

/**
 * Builds the session's MCP server with the tools `execute_code`, `wait_for_decisions` and
 * `request_connection`, and starts watching the workspace's bindings (Kernel.WatchBindings): each
 * change sends `notifications/tools/list_changed`, and the next `tools/list` carries the new `.d.ts`.
 * @throws Error naming the option when workspaceId or chatId is empty.
 */
export function createAgentMcpServer(opts: AgentMcpOptions): AgentMcpSession {
  if (!opts.workspaceId) throw new Error("createAgentMcpServer: workspaceId is required");
  if (!opts.chatId) throw new Error("createAgentMcpServer: chatId is required (the agent's chat id)");
  if (!opts.startedBy) {
    throw new Error(
      'createAgentMcpServer: startedBy is required (the person opening the session, "user:<subject>")',
    );
  }
  const logger = opts.logger ?? silent;
  const ctx: ToolContext = {
    kernel: opts.kernel,
    // Shares the kernel client's channel: closing it would close the caller's channel, so it is never closed.
    connections:
      opts.connections ??
      new ConnectionsClient("unused", credentials.createInsecure(), {
        channelOverride: opts.kernel.getChannel(),
      }),
    workspaceId: opts.workspaceId,
    chatId: opts.chatId,
    logger,
  };
  const server = new McpServer(opts.serverInfo ?? { name: "gatehouse", version: "0.1.0" }, {
    capabilities: { tools: { listChanged: true } },
    instructions: INSTRUCTIONS,
  });
  const watch = new BindingsWatch(
    opts.kernel,
    opts.workspaceId,
    (change) => {
      logger.info(
        { component: "agent-mcp", event: "bindings_changed", binding: change.binding, change: change.change },
        "bindings changed; telling the client its tool list changed",
      );
      if (server.isConnected()) server.sendToolListChanged();
    },
    logger,
  );
  // The bindings as of some revision, and the watch from there. A failed start (kernel briefly
  // unreachable) is tried again by the next tools/list, so the session does not stay broken.
  // The chat is recorded once (a retried start does not record it again), before any tool runs.
  let starting: Promise<void> | undefined;
  let chatRecorded = false;
  const recordChat = async (): Promise<void> => {
    if (chatRecorded) return;
    const { chatId, startedBy, surface, workspaceId } = opts;
    await startChat(opts.kernel, { workspaceId, chatId, startedBy, surface }).catch((err) => {
      throw new Error(kernelErrorText(err, `recording chat ${chatId} (started by ${startedBy})`));
    });
    chatRecorded = true;
    logger.info(
      { component: "agent-mcp", event: "chat_started", chatId, startedBy, surface },
      "chat recorded",
    );
  };
  const start = (): Promise<void> => {
    starting ??= describeBindings(opts.kernel, opts.workspaceId)
      .catch((err) => {
        throw new Error(kernelErrorText(err, `opening workspace ${opts.workspaceId}`));
      })
      .then(async (described) => {
        await recordChat();
        watch.start(described.revision);
      })
      .catch((err) => {
        starting = undefined;
        throw err;
      });
    return starting;
  };
  const ready = start();
  ready.catch(() => undefined); // observed by tools/list and by callers that await it
  installTools(server, AGENT_TOOLS, ctx, start);
  let closing: Promise<void> | undefined;
  return {
    server,
    ready,
    close() {
      closing ??= (async () => {
        watch.close();
        await server.close();
      })();
      return closing;
    },
  };
}
