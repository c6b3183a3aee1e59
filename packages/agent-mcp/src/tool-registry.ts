/**
 * How the session's tools are served: one `AgentTool` per file under tools/, registered from a
 * list. The session answers `tools/list` and `tools/call` itself (on the SDK's low-level Server)
 * because two things differ from McpServer.registerTool:
 * - `tools/list` builds each description when asked (execute_code's carries the workspace's
 *   current `.d.ts`, read from the kernel at that moment);
 * - an unknown tool is a JSON-RPC error (-32602 Invalid params), as the MCP spec's tools section
 *   says, while invalid arguments and everything that goes wrong inside a tool are tool results
 *   with `isError: true` the model can act on.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
  type Tool,
  type ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolContext } from "./options.ts";

/** The request context a tool handler gets from the SDK (signal, _meta.progressToken, sendNotification, …). */
export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What `tools/list` shows for a tool, built when the list is asked for. */
export interface ToolListing {
  title: string;
  description: string;
}

/**
 * One MCP tool of the session. `input` validates the arguments (a failure is a tool error naming
 * the field); `output`, when set, is the shape of the result's `structuredContent`.
 */
export interface AgentTool<In extends z.ZodObject = z.ZodObject> {
  name: string;
  input: In;
  output?: z.ZodObject;
  annotations: ToolAnnotations;
  /** Title and description; may ask the kernel (e.g. for the workspace's `.d.ts`). */
  listing(ctx: ToolContext): Promise<ToolListing>;
  /** Runs the tool. Failures the model can fix are returned with `isError: true`, not thrown. */
  call(args: z.infer<In>, ctx: ToolContext, extra: ToolExtra): Promise<CallToolResult>;
}

/** A tool result with `isError: true` and one text block. */
export function toolError(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/** A tool's zod schema as the JSON Schema (2020-12) `tools/list` shows. */
export function toolJsonSchema(schema: z.ZodObject, io: "input" | "output"): Tool["inputSchema"] {
  return z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Tool["inputSchema"];
}

/**
 * Installs `tools/list` and `tools/call` handlers for `tools` on `mcp` (which must have been
 * created with the `tools` capability). `beforeUse` runs before each listing and each call (the
 * session's start: no tool runs before it succeeded; a call whose start fails is a tool error with
 * its reason). A handler that throws is turned into a tool error naming the tool.
 */
export function installTools(
  mcp: McpServer,
  tools: readonly AgentTool[],
  ctx: ToolContext,
  beforeUse: () => Promise<void>,
): void {
  const byName = new Map(tools.map((t) => [t.name, t]));
  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => {
    await beforeUse();
    const listed = await Promise.all(
      tools.map(async (t): Promise<Tool> => {
        const { title, description } = await t.listing(ctx);
        const tool: Tool = {
          name: t.name,
          title,
          description,
          inputSchema: toolJsonSchema(t.input, "input"),
          annotations: { title, ...t.annotations },
        };
        if (t.output) tool.outputSchema = toolJsonSchema(t.output, "output") as Tool["outputSchema"];
        return tool;
      }),
    );
    return { tools: listed };
  });
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    const tool = byName.get(name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool "${name}"; this server's tools are ${tools.map((t) => t.name).join(", ")}`,
      );
    }
    const parsed = tool.input.safeParse(args ?? {});
    if (!parsed.success) {
      return toolError(`Invalid arguments for ${name}: ${z.prettifyError(parsed.error)}`);
    }
    try {
      await beforeUse();
    } catch (err) {
      return toolError(`${name} could not run: ${err instanceof Error ? err.message : String(err)}`);
    }
    const started = Date.now();
    try {
      const result = await tool.call(parsed.data, ctx, extra);
      ctx.logger.info(
        {
          component: "agent-mcp",
          event: "tool_call",
          tool: name,
          isError: !!result.isError,
          ms: Date.now() - started,
        },
        "tool call answered",
      );
      return result;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      ctx.logger.error(
        { component: "agent-mcp", event: "tool_call_failed", tool: name, ms: Date.now() - started },
        "tool call failed",
      );
      return toolError(`${name} failed: ${message}`);
    }
  });
}
