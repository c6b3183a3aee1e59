/**
 * Drives the lifecycle as the approval service and the kernel do: decisions appended to the stream
 * directly (through the domain, expected revision), then the binding's run woken or handed the
 * final actions to announce, by signal-with-start (contract: lifecycle-contract.ts).
 */
import { decide, type WorkspaceStreams } from "@gatehouse/approval-core";
import {
  BINDING_RUN_WORKFLOW,
  type BindingRunInput,
  bindingRunAnnounceSignal,
  bindingRunWakeSignal,
  bindingRunWorkflowId,
  type DecisionOutcome,
  LIFECYCLE_TASK_QUEUE,
  TURN_WORKFLOW,
  type TurnWorkflowInput,
  turnAwaitingSignal,
  turnWorkflowId,
} from "@gatehouse/approval-core/lifecycle-contract";
import { waitUntil } from "@gatehouse/service-kit";
import type { Client, WorkflowHandle } from "@temporalio/client";
import { outcomeOf, type TurnOutcome } from "../../src/index.ts";

/** Where a driver sends its signals. */
export interface Engine {
  client: Client;
  streams: WorkspaceStreams;
  taskQueue?: string;
}

/** Options of the binding runs a driver starts. */
export interface RunOptions {
  runMax?: number;
  idleMs?: number;
}

function startOptions(e: Engine, workspaceId: string, binding: string, run: RunOptions = {}) {
  const input: BindingRunInput = { workspaceId, binding, ...run };
  return {
    workflowId: bindingRunWorkflowId(workspaceId, binding),
    taskQueue: e.taskQueue ?? LIFECYCLE_TASK_QUEUE,
    args: [input] as [BindingRunInput],
  };
}

/** Wakes (starting when needed) the run of `binding`. @returns its handle. */
export function wake(
  e: Engine,
  workspaceId: string,
  binding = "MEM",
  run: RunOptions = {},
): Promise<WorkflowHandle> {
  return e.client.workflow.signalWithStart(BINDING_RUN_WORKFLOW, {
    ...startOptions(e, workspaceId, binding, run),
    signal: bindingRunWakeSignal,
    signalArgs: [],
  });
}

/**
 * Approves `actionIds` in one append (as Decisions.Approve does) and wakes their bindings' runs.
 * @returns the approved ids (the plan). @throws the domain's refusal (nothing appended).
 */
export async function approve(
  e: Engine,
  workspaceId: string,
  actionIds: number[],
  options: { decidedBy?: string; includeDependencies?: boolean; run?: RunOptions } = {},
): Promise<number[]> {
  const { events, state } = await e.streams.execute(workspaceId, (s) =>
    decide(
      {
        type: "Approve",
        actionIds,
        decidedBy: options.decidedBy ?? "user:alice",
        includeDependencies: options.includeDependencies ?? false,
      },
      s,
    ),
  );
  const ids = events.map((ev) => (ev.data as { actionId: number }).actionId);
  const bindings = new Set(ids.map((id) => state.actions.get(id)?.binding ?? "MEM"));
  for (const b of bindings) await wake(e, workspaceId, b, options.run);
  return ids;
}

/** Hands final actions to `binding`'s run to announce (turns, then gatekeeper notices). */
export function announce(e: Engine, workspaceId: string, actionIds: number[], binding = "MEM") {
  return e.client.workflow.signalWithStart(BINDING_RUN_WORKFLOW, {
    ...startOptions(e, workspaceId, binding),
    signal: bindingRunAnnounceSignal,
    signalArgs: [{ actionIds }],
  });
}

/**
 * Rejects one pending action with its cascade in one append (as Decisions.Reject does) and has the
 * worker announce them. @returns the rejected ids, root first. @throws the domain's refusal.
 */
export async function reject(
  e: Engine,
  workspaceId: string,
  actionId: number,
  reason: string,
  decidedBy = "user:bob",
): Promise<number[]> {
  const { events, state } = await e.streams.execute(workspaceId, (s) =>
    decide({ type: "Reject", actionId, decidedBy, reason }, s),
  );
  const ids = events.map((ev) => (ev.data as { actionId: number }).actionId);
  await announce(e, workspaceId, ids, state.actions.get(actionId)?.binding ?? "MEM");
  return ids;
}

/** One expiry sweep (as the approval service's): rejects what is overdue and announces it. */
export async function expire(
  e: Engine,
  workspaceId: string,
  ttlMs: number,
  binding = "MEM",
): Promise<number[]> {
  const { events } = await e.streams.execute(workspaceId, (s) =>
    decide({ type: "ExpireDue", ttlMs, nowMs: Date.now() }, s),
  );
  const ids = events.map((ev) => (ev.data as { actionId: number }).actionId);
  if (ids.length > 0) await announce(e, workspaceId, ids, binding);
  return ids;
}

/** Waits until action `actionId` is final in the stream. @returns its outcome. */
export async function outcome(
  e: Engine,
  workspaceId: string,
  actionId: number,
  timeoutMs = 60_000,
): Promise<DecisionOutcome> {
  let out: DecisionOutcome | undefined;
  await waitUntil(
    `action ${actionId} to be final`,
    async () => {
      out = outcomeOf(await e.streams.state(workspaceId), actionId);
      return out !== undefined;
    },
    { timeoutMs, intervalMs: 25 },
  );
  return out as DecisionOutcome;
}

/** A short unique id for a test's workspace. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Tells the turn workflow which actions it awaits, starting it if needed (what the kernel does). */
export function awaitTurn(
  client: Client,
  workspaceId: string,
  turnId: string,
  actionIds: number[],
  taskQueue = LIFECYCLE_TASK_QUEUE,
): Promise<WorkflowHandle<(input: TurnWorkflowInput) => Promise<TurnOutcome>>> {
  return client.workflow.signalWithStart<
    (input: TurnWorkflowInput) => Promise<TurnOutcome>,
    [{ actionIds: number[] }]
  >(TURN_WORKFLOW, {
    workflowId: turnWorkflowId(workspaceId, turnId),
    taskQueue,
    args: [{ workspaceId, turnId }],
    signal: turnAwaitingSignal,
    signalArgs: [{ actionIds }],
  });
}
