/**
 * One model call, streamed (the AI SDK's `streamText`): text is handed to `onText` as the provider
 * sends it, and the whole answer (text, finish reason, tokens, tool calls) is returned once the
 * stream ends. No retries here (`maxRetries: 0`): the agent's activity retry policy owns them.
 */
import { type LanguageModel, type ModelMessage, streamText, type ToolSet } from "ai";

/** What a model call is given. */
export interface ModelRequest {
  model: LanguageModel;
  system: string;
  messages: ModelMessage[];
  tools: ToolSet;
  abortSignal: AbortSignal;
}

/** A model's whole answer. */
export interface ModelAnswer {
  text: string;
  finishReason: string;
  /** Provider-reported tokens (0 when the provider reports none). */
  inputTokens: number;
  outputTokens: number;
  /** The calls in the order the model made them; `input` is the parsed arguments, or their raw text when they are not JSON. */
  toolCalls: Array<{ toolCallId: string; toolName: string; input: unknown }>;
}

/**
 * Calls the model, streaming its text to `onText` (each piece once, in order).
 * @throws the provider's error (an `APICallError` for an HTTP status, a connection error, …) as the
 *   SDK reports it, or the abort signal's reason when aborted.
 */
export async function streamModelCall(
  request: ModelRequest,
  onText: (text: string) => void,
): Promise<ModelAnswer> {
  const result = streamText({
    ...request,
    maxRetries: 0,
    // Errors are read from the stream below; the SDK's default handler would print them (and
    // anything they quote) to the console.
    onError: () => {},
  });
  for await (const part of result.stream) {
    if (part.type === "text-delta") onText(part.text);
    else if (part.type === "error") throw part.error;
  }
  if (request.abortSignal.aborted) throw request.abortSignal.reason;
  const [text, finishReason, usage, toolCalls] = await Promise.all([
    result.text,
    result.finishReason,
    result.usage,
    result.toolCalls,
  ]);
  return {
    text,
    finishReason,
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
    toolCalls: toolCalls.map((c) => ({ toolCallId: c.toolCallId, toolName: c.toolName, input: c.input })),
  };
}
