/**
 * The agent activities (contract in ../agent-workflows/contract.ts): a model step, a tool call run
 * at most once, waiting for people's decisions, and ending the turn. Each records what it did as
 * chat events before returning, and finds its own earlier record when retried.
 */
import { type ChatView, turnOf } from "@gatehouse/agent-core";
import {
  type AgentConfig,
  makeModel,
  modelFor,
  providerFailure,
  scrub,
} from "@gatehouse/agent-core/providers";
import type { EventStore } from "@gatehouse/event-store";
import type { ConnectionsClient, KernelClient } from "@gatehouse/proto";
import { callUnary } from "@gatehouse/service-kit";
import { status } from "@grpc/grpc-js";
import { Context } from "@temporalio/activity";
import { ApplicationFailure } from "@temporalio/common";
import type { Logger } from "pino";
import type { AgentActivities, StepOutcome } from "../agent-workflows/contract.ts";
import { appendChat, readChats } from "./chat-appends.ts";
import { DELTA_EVERY_MS, type DeltaSink, stepDeltas } from "./deltas.ts";
import { heartbeating } from "./heartbeat.ts";
import { conversation } from "./messages.ts";
import { streamModelCall } from "./model-call.ts";
import { EXECUTE_CODE, systemPrompt } from "./prompt.ts";
import { checkConnectionCall, REQUEST_CONNECTION, runConnectionCall } from "./request-connection.ts";
import { builtinResultText, SNIPPET_WALL_MS } from "./result-text.ts";
import { checkToolCall, executionIdOf } from "./tool-call.ts";
import { agentTools } from "./tools.ts";

/** What the agent activities run on. */
export interface AgentActivityDeps {
  store: EventStore;
  kernel: KernelClient;
  /** The kernel's Connections service (request_connection). */
  connections: ConnectionsClient;
  config: AgentConfig;
  logger: Logger;
  /**
   * Where the model's text goes while it streams (a notice bus's `publishChatDelta`: NATS in split
   * mode, the in-process bus in `gatehouse dev`); undefined: no deltas (the recorded step still
   * carries the whole text).
   */
  deltas?: DeltaSink;
}

function chatOf(chats: Map<string, ChatView>, chatId: string): ChatView {
  const chat = chats.get(chatId);
  if (!chat) throw ApplicationFailure.nonRetryable(`chat ${chatId} does not exist`, "ChatNotFound");
  return chat;
}

/** Cuts `text` to `max` bytes of UTF-8, saying so. */
function bounded(text: string, max: number): string {
  if (Buffer.byteLength(text, "utf8") <= max) return text;
  const cut = Buffer.from(text, "utf8")
    .subarray(0, max)
    .toString("utf8")
    .replace(/\uFFFD$/, "");
  return `${cut}\n[… cut at ${max} bytes (AGENT_MAX_RESULT_BYTES): return less, e.g. only the fields you need]`;
}

/** The recorded outcome of `step` (its answer and calls), or undefined when not recorded yet. */
function recordedStep(chat: ChatView, turnId: string, step: number): StepOutcome | undefined {
  const answer = chat.entries.find((e) => e.kind === "model" && e.turnId === turnId && e.step === step);
  if (answer?.kind !== "model") return undefined;
  const calls = chat.entries.flatMap((e) =>
    e.kind === "tool_call" && e.turnId === turnId && e.step === step
      ? [{ toolCallId: e.toolCallId, toolName: e.toolName, problem: e.problem, executionId: e.executionId }]
      : [],
  );
  return { calls, tokens: answer.inputTokens + answer.outputTokens };
}

/** The agent activities over `deps`. */
export function createAgentActivities(deps: AgentActivityDeps): AgentActivities {
  const { store, kernel, connections, config } = deps;
  const logger = deps.logger.child({ component: "agent" });
  return {
    async agentModelStep({ workspaceId, chatId, turnId, step }) {
      const { chats, decisions } = await readChats(store, workspaceId);
      const chat = chatOf(chats.chats, chatId);
      const done = recordedStep(chat, turnId, step);
      if (done) return done;
      const turn = turnOf(chat, turnId);
      if (!turn || turn.state === "ended")
        throw ApplicationFailure.nonRetryable(`turn ${turnId} is not open`, "TurnNotOpen");
      let ready: ReturnType<typeof makeModel>;
      try {
        ready = makeModel(modelFor(config, workspaceId));
      } catch (err) {
        throw ApplicationFailure.nonRetryable((err as Error).message, "AgentConfigError");
      }
      const described = await callUnary(kernel, kernel.describeBindings, { workspaceId });
      const started = Date.now();
      const deltas = stepDeltas(
        deps.deltas,
        { workspaceId, chatId, turnId, step },
        DELTA_EVERY_MS,
        ready.secret,
      );
      const cancelled = Context.current().cancellationSignal;
      const result = await heartbeating(
        streamModelCall(
          {
            model: ready.model,
            system: systemPrompt(described.envDts, described.bindings.length),
            messages: conversation(chat, decisions),
            tools: agentTools(described.envDts, described.bindings.length),
            abortSignal: cancelled,
          },
          (text) => deltas.push(text),
        )
          .catch((err: unknown) => {
            // Cancelled (the turn ended, the worker stops): not the provider's failure.
            if (cancelled.aborted) throw cancelled.reason ?? err;
            const f = providerFailure(err, ready.secret);
            logger.warn({
              event: "model_call_failed",
              workspaceId,
              turnId,
              step,
              status: f.status,
              retryable: f.retryable,
            });
            if (f.retryable) throw ApplicationFailure.retryable(f.message, "ProviderRetryable");
            throw ApplicationFailure.nonRetryable(f.message, "ProviderError");
          })
          .finally(() => deltas.flush()),
      );
      logger.info({ event: "model_step", workspaceId, turnId, step, ms: Date.now() - started });
      const { inputTokens, outputTokens } = result;
      const calls = result.toolCalls.map((c, n) => {
        const raw = typeof c.input === "string" ? c.input : JSON.stringify(c.input ?? {});
        const checked = checkToolCall(c.toolName, raw);
        return {
          toolCallId: c.toolCallId,
          toolName: c.toolName,
          argumentsJson: raw.slice(0, 512 * 1024),
          problem: checked.problem,
          executionId: executionIdOf(c.toolName, checked, turnId, step, n),
        };
      });
      await appendChat(store, workspaceId, chatId, [
        {
          type: "RecordModelMessage",
          chatId,
          turnId,
          step,
          text: scrub(result.text, ready.secret),
          finishReason: result.finishReason,
          inputTokens,
          outputTokens,
        },
        ...calls.flatMap((c) => [
          { type: "RecordToolCall" as const, chatId, turnId, step, ...c },
          ...(c.problem
            ? [
                {
                  type: "RecordToolResult" as const,
                  chatId,
                  turnId,
                  step,
                  toolCallId: c.toolCallId,
                  executionId: "",
                  ok: false,
                  text: c.problem,
                  awaitedActionIds: [],
                },
              ]
            : []),
        ]),
      ]);
      return {
        calls: calls.map(({ toolCallId, toolName, problem, executionId }) => ({
          toolCallId,
          toolName,
          problem,
          executionId,
        })),
        tokens: inputTokens + outputTokens,
      };
    },

    async agentRunCall({ workspaceId, chatId, turnId, toolCallId }) {
      const { chats } = await readChats(store, workspaceId);
      const chat = chatOf(chats.chats, chatId);
      const call = chat.entries.find(
        (e) => e.kind === "tool_call" && e.turnId === turnId && e.toolCallId === toolCallId,
      );
      if (call?.kind !== "tool_call")
        throw ApplicationFailure.nonRetryable(`tool call ${toolCallId} is not recorded`, "ToolCallNotFound");
      if (call.result)
        return {
          ok: call.result.ok,
          kernelTurnId: call.result.awaitedActionIds.length ? call.executionId : "",
        };
      if (call.toolName === REQUEST_CONNECTION) {
        const args = checkConnectionCall(call.argumentsJson).args ?? {};
        const r = await heartbeating(runConnectionCall(connections, workspaceId, chatId, args, EXECUTE_CODE));
        await appendChat(store, workspaceId, chatId, [
          {
            type: "RecordToolResult",
            chatId,
            turnId,
            step: call.step,
            toolCallId,
            executionId: "",
            ok: r.ok,
            text: bounded(r.text, config.limits.maxResultBytes),
            awaitedActionIds: [],
          },
        ]);
        logger.info({ event: "connection_requested", workspaceId, turnId, requestId: r.requestId, ok: r.ok });
        return { ok: r.ok, kernelTurnId: "" };
      }
      const { code } = checkToolCall(call.toolName, call.argumentsJson);
      // The same execution id on every attempt: the kernel runs the snippet at most once.
      const result = await heartbeating(
        callUnary(
          kernel,
          kernel.executeCode,
          {
            workspaceId,
            code,
            caller: { kind: "agent", id: chatId },
            limits: { wallTimeMs: SNIPPET_WALL_MS, heapMb: 0, outputBytes: 0 },
            executionId: call.executionId,
          },
          SNIPPET_WALL_MS + 60_000,
        ),
      );
      const awaited = result.submitted.filter((a) => a.awaited).map((a) => a.actionId);
      await appendChat(store, workspaceId, chatId, [
        {
          type: "RecordToolResult",
          chatId,
          turnId,
          step: call.step,
          toolCallId,
          executionId: call.executionId,
          ok: result.ok,
          text: bounded(builtinResultText(result), config.limits.maxResultBytes),
          awaitedActionIds: awaited,
        },
      ]);
      logger.info({
        event: "tool_call_ran",
        workspaceId,
        turnId,
        executionId: call.executionId,
        ok: result.ok,
      });
      return { ok: result.ok, kernelTurnId: awaited.length ? call.executionId : "" };
    },

    async agentWaitForDecisions({ workspaceId, kernelTurnId }) {
      const ctx = Context.current();
      for (;;) {
        ctx.heartbeat();
        // The kernel answers shortly before the call's deadline; on a busy machine the answer may
        // come too late: that is "still waiting", not a failure.
        const turn = await callUnary(
          kernel,
          kernel.getTurn,
          { workspaceId, turnId: kernelTurnId, wait: true },
          20_000,
        ).catch((err: { code?: number }) => {
          if (err.code === status.DEADLINE_EXCEEDED) return undefined;
          throw err;
        });
        if (turn && (turn.state === "resumed" || turn.state === "completed"))
          return { state: turn.state, reason: turn.reason };
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
      }
    },

    async agentEndTurn({ workspaceId, chatId, turnId, reason, message }) {
      await appendChat(store, workspaceId, chatId, [
        { type: "EndTurn", chatId, turnId, reason: reason as never, message },
      ]);
      logger.info({ event: "turn_ended", workspaceId, turnId, reason });
    },
  };
}
