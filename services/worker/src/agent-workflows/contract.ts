/**
 * The agent turn workflow's contract (pure: imported by workflow code and by whoever starts turns):
 * its task queue, workflow id, input, the cancel signal, and the activities it calls.
 */
import { defineSignal } from "@temporalio/workflow";

/** Task queue of the built-in agent's turns (polled by `startAgentWorker`). */
export const AGENT_TASK_QUEUE = "gatehouse-agent";
/** Workflow type name. */
export const AGENT_TURN_WORKFLOW = "agentTurn";

/** Workflow id of one turn: `agent-turn/<workspace>/<turn>`. */
export function agentTurnWorkflowId(workspaceId: string, turnId: string): string {
  return `agent-turn/${workspaceId}/${turnId}`;
}

/** Input of one turn (its ChatTurnStarted is already in the stream). */
export interface AgentTurnInput {
  workspaceId: string;
  chatId: string;
  turnId: string;
  /** Model calls allowed (ChatTurnStarted.max_steps). */
  maxSteps: number;
  /** Input + output tokens allowed (ChatTurnStarted.max_tokens). */
  maxTokens: number;
  /** Attempts of one model call on retryable provider errors. */
  modelAttempts: number;
}

/** A person cancels the turn; `by` is "user:<subject>". */
export const agentCancelSignal = defineSignal<[{ by: string }]>("cancel");

/** A tool call of one step, as the model step activity recorded it. */
export interface StepCall {
  toolCallId: string;
  toolName: string;
  /** "" when the call can run. */
  problem: string;
  executionId: string;
}

/** What one model step did. */
export interface StepOutcome {
  calls: StepCall[];
  /** Input + output tokens this step used. */
  tokens: number;
}

/** What one tool call did. */
export interface CallOutcome {
  ok: boolean;
  /** Set when its awaited writes suspended the kernel turn (the execution id). */
  kernelTurnId: string;
}

/** How people decided the awaited writes. */
export interface DecisionsOutcome {
  state: "resumed" | "completed";
  reason: string;
}

/** The agent activities (src/agent/activities.ts). */
export interface AgentActivities {
  /**
   * One model call (step `step`), unless this step's answer is already recorded: builds the
   * conversation from the stream, calls the model, records ChatModelMessage, each ChatToolCalled
   * (and for a call that cannot run, its ChatToolResult naming the problem). Throws a retryable
   * failure on 429/5xx/no answer, a non-retryable "ProviderError" otherwise.
   */
  agentModelStep(input: {
    workspaceId: string;
    chatId: string;
    turnId: string;
    step: number;
  }): Promise<StepOutcome>;
  /** Runs one recorded tool call at most once and records its ChatToolResult (or returns the one recorded). */
  agentRunCall(input: {
    workspaceId: string;
    chatId: string;
    turnId: string;
    toolCallId: string;
  }): Promise<CallOutcome>;
  /** Waits (heartbeating) until the kernel turn `kernelTurnId` resumed or completed. */
  agentWaitForDecisions(input: { workspaceId: string; kernelTurnId: string }): Promise<DecisionsOutcome>;
  /** Records ChatTurnEnded (once). */
  agentEndTurn(input: {
    workspaceId: string;
    chatId: string;
    turnId: string;
    reason: string;
    message: string;
  }): Promise<void>;
}
