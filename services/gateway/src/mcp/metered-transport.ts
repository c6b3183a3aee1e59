/**
 * A transport wrapper that counts an MCP session's tool calls by tool and outcome: it sees each
 * `tools/call` request come in and its response go out. Tool names become metric labels only up to
 * {@link MAX_TOOL_LABELS} distinct names per process (then "other"), so clients calling made-up
 * tools cannot grow the label set without bound.
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { GatewayMetrics } from "../metrics.ts";

type Outcome = "ok" | "tool_error" | "protocol_error" | "abandoned";

/** Distinct tool names used as labels, per process. */
export const MAX_TOOL_LABELS = 32;
const labels = new Set<string>();

function toolLabel(name: string): string {
  if (labels.has(name)) return name;
  if (labels.size >= MAX_TOOL_LABELS || !/^[A-Za-z0-9_.-]{1,64}$/.test(name)) return "other";
  labels.add(name);
  return name;
}

/** Wraps `inner`; the MCP server connects to the wrapper, requests are handed to `inner`. */
export class MeteredTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private readonly calls = new Map<RequestId, { tool: string; began: number }>();

  constructor(
    private readonly inner: Transport,
    private readonly metrics: GatewayMetrics,
  ) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => {
      this.observeIn(message);
      this.onmessage?.(message, extra);
    };
    this.inner.onerror = (error) => this.onerror?.(error);
    const innerClose = this.inner.onclose;
    this.inner.onclose = () => {
      for (const { tool, began } of this.calls.values()) this.count(tool, "abandoned", began);
      this.calls.clear();
      innerClose?.();
      this.onclose?.();
    };
    await this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.observeOut(message);
    await this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private observeIn(message: JSONRPCMessage): void {
    if (!("method" in message) || !("id" in message) || message.method !== "tools/call") return;
    const name = (message.params as { name?: unknown } | undefined)?.name;
    this.calls.set(message.id, { tool: typeof name === "string" ? name : "", began: performance.now() });
  }

  private observeOut(message: JSONRPCMessage): void {
    if ("method" in message || !("id" in message) || message.id === undefined) return;
    const call = this.calls.get(message.id);
    if (!call) return;
    this.calls.delete(message.id);
    const outcome: Outcome =
      "error" in message
        ? "protocol_error"
        : (message.result as { isError?: boolean }).isError
          ? "tool_error"
          : "ok";
    this.count(call.tool, outcome, call.began);
  }

  private count(tool: string, outcome: Outcome, began: number): void {
    const label = toolLabel(tool);
    this.metrics.mcpToolCalls.inc({ tool: label, outcome });
    this.metrics.mcpToolCallSeconds.observe({ tool: label }, (performance.now() - began) / 1000);
  }
}
