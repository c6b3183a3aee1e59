/**
 * Executions with a caller-given id (ExecuteCodeRequest.execution_id) run at most once per
 * workspace: a call joins the same id's run in progress in this kernel, answers a finished run from
 * its CodeExecuted.result_json, and refuses to run again an id whose CodeExecutionStarted has no
 * CodeExecuted (the kernel that ran it stopped: its outcome is unknown). The claim is appended with
 * an expected revision, so two kernels racing on one id get one run.
 */
import { createHash } from "node:crypto";
import { type EventStore, WrongExpectedRevision } from "@gatehouse/event-store";
import { CodeExecuted, CodeExecutionStarted, ExecuteResult } from "@gatehouse/proto";
import { InvalidArgument } from "./domain/errors.ts";
import { streamOf } from "./domain/workspace.ts";
import { ExecutionIndex, type ExecutionIndexOptions } from "./execution-index.ts";

/** What a caller-given execution id may look like. */
export const EXECUTION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Runs of this kernel in progress, by `<workspace>\u0000<execution id>`. */
const inFlight = new Map<string, Promise<ExecuteResult>>();

/** @throws InvalidArgument naming the expected shape. */
export function checkExecutionId(id: string): void {
  if (!EXECUTION_ID.test(id))
    throw new InvalidArgument(
      `execution_id must be 1–128 letters, digits or . _ : - (or empty for a fresh id); got ${JSON.stringify(id.slice(0, 40))}`,
    );
}

function unknownOutcome(executionId: string): ExecuteResult {
  return {
    ok: false,
    returnJson: "",
    console: [],
    error: {
      name: "ExecutionOutcomeUnknown",
      message: `execution ${executionId} started earlier but its result was never recorded (the kernel running it stopped); it is not run again — read the workspace to see what it did`,
      stack: "",
      line: 0,
      column: 0,
    },
    durationMs: 0,
    outputTruncated: false,
    warnings: [],
    executionId,
    turnId: "",
    submitted: [],
    observed: [],
  };
}

/** The index of execution ids of each store this process uses. */
const indexes = new WeakMap<EventStore, ExecutionIndex>();

/**
 * Replaces this process's execution-id index of `store` with one of these bounds (`{ maxWorkspaces: 0 }`:
 * no index, every check reads the whole stream, as before the index; benchmarks compare the two).
 */
export function configureExecutionIndex(store: EventStore, options: ExecutionIndexOptions): void {
  indexes.set(store, new ExecutionIndex(store, options));
}

/** What the stream says of an execution id (through this process's index: only new events are read). */
async function recorded(
  store: EventStore,
  workspaceId: string,
  executionId: string,
): Promise<{ revision: number; started: string; result: ExecuteResult | undefined }> {
  let index = indexes.get(store);
  if (!index) {
    index = new ExecutionIndex(store);
    indexes.set(store, index);
  }
  const { revision, execution } = await index.lookUp(workspaceId, executionId);
  if (!execution) return { revision, started: "", result: undefined };
  let result: ExecuteResult | undefined;
  if (execution.resultRevision >= 0) {
    const [event] = await store.readStream(streamOf(workspaceId), {
      fromRevision: execution.resultRevision,
      maxCount: 1,
    });
    const c = CodeExecuted.fromJSON(event?.data);
    result = ExecuteResult.fromJSON(JSON.parse(c.resultJson));
  }
  return { revision, started: execution.started, result };
}

/**
 * Runs `run` once for (workspace, execution id): joins a run in progress here, returns a recorded
 * result, or claims the id (CodeExecutionStarted, appended at the revision read) and runs it. A call
 * arriving while this kernel claims or runs the id joins that promise at once, so it never reads a
 * half-made claim as a stale one.
 */
export function runOnce(
  store: EventStore,
  workspaceId: string,
  executionId: string,
  code: string,
  actor: string,
  run: () => Promise<ExecuteResult>,
): Promise<ExecuteResult> {
  const key = `${workspaceId}\u0000${executionId}`;
  const running = inFlight.get(key);
  if (running) return running;
  const promise = claimAndRun(store, workspaceId, executionId, code, actor, run).finally(() =>
    inFlight.delete(key),
  );
  inFlight.set(key, promise);
  return promise;
}

async function claimAndRun(
  store: EventStore,
  workspaceId: string,
  executionId: string,
  code: string,
  actor: string,
  run: () => Promise<ExecuteResult>,
): Promise<ExecuteResult> {
  const sha = createHash("sha256").update(code).digest("hex");
  for (let attempt = 0; ; attempt++) {
    const seen = await recorded(store, workspaceId, executionId);
    if (seen.started && seen.started !== sha)
      throw new InvalidArgument(
        `execution_id ${executionId} was used for other code in this workspace; an id names one snippet run — use a new id for new code`,
      );
    if (seen.result) return seen.result;
    // Claimed and not finished, and not by a run of this kernel (that one was joined above): the
    // kernel that claimed it stopped, or another kernel runs it now. Either way, never a second run.
    if (seen.started) return unknownOutcome(executionId);
    try {
      await store.append(
        streamOf(workspaceId),
        [
          {
            type: "CodeExecutionStarted",
            data: CodeExecutionStarted.toJSON({
              executionId,
              codeSha256: sha,
            }),
            metadata: { actor },
          },
        ],
        seen.revision,
      );
      break;
    } catch (err) {
      // Another append landed first (any event of the workspace): read again and decide again.
      if (!(err instanceof WrongExpectedRevision) || attempt >= 20) throw err;
    }
  }
  return run();
}
