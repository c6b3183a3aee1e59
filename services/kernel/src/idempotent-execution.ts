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

/** What the stream says of an execution id. */
async function recorded(
  store: EventStore,
  workspaceId: string,
  executionId: string,
): Promise<{ revision: number; started: boolean; result: ExecuteResult | undefined }> {
  const events = await store.readStream(streamOf(workspaceId));
  let started = false;
  let result: ExecuteResult | undefined;
  for (const e of events) {
    if (
      e.type === "CodeExecutionStarted" &&
      CodeExecutionStarted.fromJSON(e.data).executionId === executionId
    )
      started = true;
    else if (e.type === "CodeExecuted") {
      const c = CodeExecuted.fromJSON(e.data);
      if (c.executionId === executionId && c.resultJson)
        result = ExecuteResult.fromJSON(JSON.parse(c.resultJson));
    }
  }
  return { revision: events.at(-1)?.revision ?? -1, started, result };
}

/**
 * Runs `run` once for (workspace, execution id): joins a run in progress here, returns a recorded
 * result, or claims the id (CodeExecutionStarted) and runs it.
 */
export async function runOnce(
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
  for (let attempt = 0; ; attempt++) {
    const seen = await recorded(store, workspaceId, executionId);
    if (seen.result) return seen.result;
    if (seen.started) return inFlight.get(key) ?? unknownOutcome(executionId);
    try {
      await store.append(
        streamOf(workspaceId),
        [
          {
            type: "CodeExecutionStarted",
            data: CodeExecutionStarted.toJSON({
              executionId,
              codeSha256: createHash("sha256").update(code).digest("hex"),
            }),
            metadata: { actor },
          },
        ],
        seen.revision,
      );
      break;
    } catch (err) {
      if (!(err instanceof WrongExpectedRevision) || attempt >= 20) throw err;
      const joined = inFlight.get(key);
      if (joined) return joined;
    }
  }
  const promise = run().finally(() => inFlight.delete(key));
  inFlight.set(key, promise);
  return promise;
}
