/** What a Gatehouse MCP session is given: its kernel, its workspace and chat, a logger. */
import type { ConnectionsClient, KernelClient } from "@gatehouse/proto";

/**
 * The few logger methods the session uses; a pino Logger fits. Entries carry `component:
 * "agent-mcp"` and an `event` field, never snippet bodies, tool results or external data.
 */
export interface AgentMcpLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Options of `createAgentMcpServer`. */
export interface AgentMcpOptions {
  /** A Kernel gRPC client; the session does not close it (the caller owns it). */
  kernel: KernelClient;
  /** The workspace this session works in, e.g. "w0123456789". */
  workspaceId: string;
  /**
   * The chat this session is: every execution is stamped caller `{kind: "agent", id: chatId}` by
   * the kernel; nothing the agent sends can change it. Non-empty.
   */
  chatId: string;
  /**
   * "user:<subject>" of the person who opened this session (the gateway: the token's person; stdio:
   * the CLI's user). Recorded with `surface` as ChatStarted (Kernel.StartChat) before any tool
   * runs, so the log names whose agent made each read and write of the chat.
   */
  startedBy: string;
  /** How the session is reached: "mcp-http" (the gateway's /mcp) or "mcp-stdio" (gatehouse mcp). */
  surface: "mcp-http" | "mcp-stdio";
  logger?: AgentMcpLogger | undefined;
  /**
   * The kernel's Connections service (request_connection); default: a client over `kernel`'s own
   * channel (the kernel process serves both).
   */
  connections?: ConnectionsClient | undefined;
  /** Server name and version announced at `initialize` (default "gatehouse", "0.1.0"). */
  serverInfo?: { name: string; version: string } | undefined;
}

/** What a tool handler gets: the session's fixed identity and its kernel. */
export interface ToolContext {
  kernel: KernelClient;
  connections: ConnectionsClient;
  workspaceId: string;
  chatId: string;
  logger: AgentMcpLogger;
}
