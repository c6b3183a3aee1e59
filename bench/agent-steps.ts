/**
 * Where the time of one agent turn went, read off the workspace stream (`npm run bench:agent`): every
 * event carries the store's `occurredAt` (ISO-8601, 1 ms resolution), so a step's phases are the gaps
 * between the chat events the agent loop appended and the kernel's execution events in between.
 */

/** The part of a stored event this reads. */
export interface TimedEvent {
  type: string;
  data: unknown;
  metadata: { occurredAt: string };
}

/** One tool-call step of a turn, ms. */
export interface StepTiming {
  /** 1-based step number (the model call's). */
  step: number;
  /** The step's start, ms since the epoch. */
  startAt: number;
  /** The step's end (its ChatToolResult) minus its start (ChatTurnStarted for step 1, else the previous ChatToolResult). */
  totalMs: number;
  /** Start → ChatModelMessage: the model activity (scheduling, stream read, DescribeBindings, the model call, the append). */
  modelPhaseMs: number;
  /** ChatModelMessage → ChatToolResult: the tool-call activity (scheduling, stream read, ExecuteCode, the append). */
  toolPhaseMs: number;
  /** ChatModelMessage → CodeExecutionStarted: from the model step's record to the kernel's claim of the execution. */
  toClaimMs: number;
  /** CodeExecutionStarted → CodeExecuted of the step's execution: the kernel's claim to its record of the outcome. */
  kernelMs: number;
  /** CodeExecuted → ChatToolResult: from the kernel's record to the agent's. */
  afterRecordMs: number;
  /** CodeExecuted.durationMs: the kernel's own measure of the execution. */
  executionMs: number;
  /** The step's execution id (`<turn>.<step>.0`). */
  executionId: string;
}

/** A turn's steps and its closing step. */
export interface TurnTiming {
  steps: StepTiming[];
  /** Last ChatToolResult → ChatTurnEnded: the final model call (a text answer) and the end of the turn. */
  closingMs: number;
  /** ChatUserMessage → ChatTurnEnded. */
  turnMs: number;
  /** ChatTurnEnded.reason. */
  reason: string;
}

const at = (e: TimedEvent) => Date.parse(e.metadata.occurredAt);
const field = (e: TimedEvent, name: string): unknown => (e.data as Record<string, unknown>)[name];

/**
 * The timings of turn `turnId` from the workspace stream's `events` (any superset of the turn's).
 * Expects one executeCode call per step, every step but the last calling it.
 * @throws Error naming the missing event when the turn is not complete or not shaped so.
 */
export function turnTiming(events: TimedEvent[], turnId: string): TurnTiming {
  const of = (type: string, step?: number) =>
    events.filter(
      (e) =>
        e.type === type && field(e, "turnId") === turnId && (step === undefined || field(e, "step") === step),
    );
  const one = (type: string, step?: number): TimedEvent => {
    const found = of(type, step);
    if (found.length !== 1)
      throw new Error(
        `turn ${turnId}: expected one ${type}${step === undefined ? "" : ` of step ${step}`}, found ${found.length}`,
      );
    return found[0] as TimedEvent;
  };
  const byExecution = (type: string, id: string): TimedEvent => {
    const found = events.filter((e) => e.type === type && field(e, "executionId") === id);
    if (found.length !== 1) throw new Error(`execution ${id}: expected one ${type}, found ${found.length}`);
    return found[0] as TimedEvent;
  };
  const message = one("ChatUserMessage");
  const ended = one("ChatTurnEnded");
  const calls = of("ChatToolCalled");
  const steps: StepTiming[] = [];
  let start = at(one("ChatTurnStarted"));
  for (let step = 1; step <= calls.length; step++) {
    const model = one("ChatModelMessage", step);
    const called = one("ChatToolCalled", step);
    const result = one("ChatToolResult", step);
    const executionId = String(field(called, "executionId") ?? "");
    if (!executionId)
      throw new Error(`turn ${turnId}: step ${step}'s call did not execute: ${field(called, "problem")}`);
    const claimed = byExecution("CodeExecutionStarted", executionId);
    const executed = byExecution("CodeExecuted", executionId);
    steps.push({
      step,
      startAt: start,
      totalMs: at(result) - start,
      modelPhaseMs: at(model) - start,
      toolPhaseMs: at(result) - at(model),
      toClaimMs: at(claimed) - at(model),
      kernelMs: at(executed) - at(claimed),
      afterRecordMs: at(result) - at(executed),
      executionMs: Number(field(executed, "durationMs") ?? 0),
      executionId,
    });
    start = at(result);
  }
  return {
    steps,
    closingMs: at(ended) - start,
    turnMs: at(ended) - at(message),
    reason: String(field(ended, "reason") ?? ""),
  };
}
