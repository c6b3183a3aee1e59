import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type EventStore, openSqliteEventStore, type ReadOptions } from "@gatehouse/event-store";
import { CodeExecuted, CodeExecutionStarted } from "@gatehouse/proto";
import { ExecutionIndex } from "../src/execution-index.ts";

const STREAM = "workspace-w1";

function started(executionId: string, sha: string) {
  return {
    type: "CodeExecutionStarted",
    data: CodeExecutionStarted.toJSON({ executionId, codeSha256: sha }),
  };
}

function executed(executionId: string) {
  return {
    type: "CodeExecuted",
    data: CodeExecuted.toJSON({ ...CodeExecuted.fromJSON({}), executionId, resultJson: '{"ok":true}' }),
  };
}

test("the execution index finds an id claimed anywhere in the stream and reads only new events", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gh-exec-index-"));
  const store = openSqliteEventStore(join(dir, "events.sqlite"));
  try {
    const reads: number[] = [];
    const counted = Object.create(store) as EventStore;
    counted.readStream = async (id: string, options?: ReadOptions) => {
      const events = await store.readStream(id, options);
      reads.push(events.length);
      return events;
    };
    // An id claimed at the very start, then many unrelated events: no recent window would find it.
    await store.append(STREAM, [started("old", "a".repeat(64))], "no_stream");
    await store.append(
      STREAM,
      Array.from({ length: 500 }, (_, n) => ({ type: "Filler", data: { n } })),
      "any",
    );
    const index = new ExecutionIndex(counted);
    const first = await index.lookUp("w1", "old");
    assert.deepEqual(first, { revision: 500, execution: { started: "a".repeat(64), resultRevision: -1 } });
    assert.deepEqual(await index.lookUp("w1", "new"), { revision: 500, execution: undefined });
    // Another kernel claims and finishes "new"; the next look-up reads just those two events.
    await store.append(STREAM, [started("new", "b".repeat(64)), executed("new")], "any");
    reads.length = 0;
    assert.deepEqual(await index.lookUp("w1", "new"), {
      revision: 502,
      execution: { started: "b".repeat(64), resultRevision: 502 },
    });
    assert.deepEqual(reads, [2]);
    // Evicted (a bound of one workspace): folded whole again, same answer.
    const small = new ExecutionIndex(counted, { maxWorkspaces: 1 });
    await small.lookUp("w1", "old");
    await store.append("workspace-w2", [started("x", "c".repeat(64))], "no_stream");
    await small.lookUp("w2", "x");
    reads.length = 0;
    assert.equal((await small.lookUp("w1", "old")).execution?.started, "a".repeat(64));
    assert.deepEqual(reads, [503]);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
