/**
 * The agent loop, one workflow per turn: call the model (an activity), run each tool call it made
 * (an activity that runs a snippet at most once, by execution id), feed the results back, until the
 * model answers without a tool call or a limit ends the turn: the step cap, the token budget, a
 * person's cancel signal, a provider that keeps failing after retries with backoff, or an awaited
 * write that was rejected. Awaited writes suspend the turn durably (an activity waits for people's
 * decisions) and resume it with their outcomes (in the stream, read by the next model step);
 * simulated writes let it go on at once. Deterministic: no I/O here.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  setHandler,
} from "@temporalio/workflow";
import { type AgentActivities, type AgentTurnInput, agentCancelSignal } from "./contract.ts";

const records = proxyActivities<AgentActivities>({
  startToCloseTimeout: "2m",
  retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "30s", maximumAttempts: 10 },
});
const runs = proxyActivities<AgentActivities>({
  // The snippet's wall time is at most 5 minutes; the kernel joins or answers a repeat of the same id.
  startToCloseTimeout: "7m",
  // The activity heartbeats while the kernel runs the snippet: a dead worker is seen within 15 s.
  heartbeatTimeout: "15s",
  retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "30s", maximumAttempts: 20 },
});
const waits = proxyActivities<AgentActivities>({
  startToCloseTimeout: "30d",
  heartbeatTimeout: "60s",
  retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "1m" },
});

/** The provider's message from a failed model activity. */
function providerMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  return e instanceof ApplicationFailure || e instanceof Error ? e.message : String(e);
}

/** Workflow `agentTurn`. @returns the end reason recorded. */
export async function agentTurn(input: AgentTurnInput): Promise<string> {
  const { workspaceId, chatId, turnId } = input;
  let cancelledBy = "";
  setHandler(agentCancelSignal, ({ by }) => {
    cancelledBy ||= by;
  });
  const end = async (reason: string, message: string) => {
    await records.agentEndTurn({ workspaceId, chatId, turnId, reason, message });
    return reason;
  };
  /** Runs `work` unless the person cancels first (then the work is abandoned and undefined returned). */
  const unlessCancelled = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
    const scope = new CancellationScope();
    const running = scope.run(work);
    const cancelled = condition(() => cancelledBy !== "").then(() => scope.cancel());
    try {
      return await running;
    } catch (err) {
      if (cancelledBy && isCancellation(err)) return undefined;
      throw err;
    } finally {
      void cancelled;
    }
  };
  const model = proxyActivities<AgentActivities>({
    startToCloseTimeout: "5m",
    heartbeatTimeout: "15s",
    retry: {
      initialInterval: "1s",
      backoffCoefficient: 2,
      maximumInterval: "30s",
      maximumAttempts: input.modelAttempts,
      nonRetryableErrorTypes: ["ProviderError", "AgentConfigError"],
    },
  });

  let tokens = 0;
  for (let step = 1; ; step++) {
    if (cancelledBy) return end("cancelled", `cancelled by ${cancelledBy}`);
    if (step > input.maxSteps)
      return end(
        "step_cap",
        `the turn reached its step cap: ${input.maxSteps} model calls (AGENT_MAX_STEPS); send a message to go on`,
      );
    if (tokens >= input.maxTokens)
      return end(
        "token_budget",
        `the turn used ${tokens} tokens, its budget is ${input.maxTokens} (AGENT_MAX_TURN_TOKENS); send a message to go on`,
      );
    let outcome: Awaited<ReturnType<AgentActivities["agentModelStep"]>> | undefined;
    try {
      outcome = await unlessCancelled(() => model.agentModelStep({ workspaceId, chatId, turnId, step }));
    } catch (err) {
      return end("provider", `the model provider failed: ${providerMessage(err)}`);
    }
    if (!outcome) return end("cancelled", `cancelled by ${cancelledBy}`);
    tokens += outcome.tokens;
    if (outcome.calls.length === 0) return end("done", "");
    for (const call of outcome.calls) {
      if (call.problem) continue; // recorded with its result already: the model is asked again
      const ran = await runs.agentRunCall({ workspaceId, chatId, turnId, toolCallId: call.toolCallId });
      if (!ran.kernelTurnId) continue;
      const decided = await unlessCancelled(() =>
        waits.agentWaitForDecisions({ workspaceId, kernelTurnId: ran.kernelTurnId }),
      );
      if (!decided) return end("cancelled", `cancelled by ${cancelledBy} while writes waited for people`);
      if (decided.state === "completed") return end("rejected", decided.reason);
    }
  }
}
