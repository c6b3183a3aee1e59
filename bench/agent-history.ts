/**
 * A seeded kernel history for the agent benchmarks: events appended straight through the event store so
 * a workspace stream is large before the agent turns run (claims, observations, CodeExecuted results).
 */
import type { EventStore, NewEvent } from "@gatehouse/event-store";
import { CodeExecuted, CodeExecutionStarted, ExecuteResult, ObservationRecorded } from "@gatehouse/proto";

/** A result as the kernel records it (its proto3 JSON in CodeExecuted.result_json). */
export function resultOf(executionId: string): ExecuteResult {
  return ExecuteResult.fromJSON({ ok: true, returnJson: "1", executionId, durationMs: 12 });
}

/** Event `n` of a seeded kernel history: a claim, an observation, then the run's CodeExecuted. */
function historyEvent(n: number): NewEvent {
  const executionId = `seed-${Math.floor(n / 3)}`;
  switch (n % 3) {
    case 0:
      return {
        type: "CodeExecutionStarted",
        data: CodeExecutionStarted.toJSON({ executionId, codeSha256: "0".repeat(64) }),
      };
    case 1:
      return {
        type: "ObservationRecorded",
        data: ObservationRecorded.toJSON(
          ObservationRecorded.fromJSON({
            binding: "MEMORY",
            executionId,
            description: {
              title: `Read the graph (${n})`,
              description: "entities and relations of the memory graph",
              kind: "mcp.tool.read_graph",
            },
          }),
        ),
      };
    default:
      return {
        type: "CodeExecuted",
        data: CodeExecuted.toJSON(
          CodeExecuted.fromJSON({
            executionId,
            codeSha256: "0".repeat(64),
            ok: true,
            durationMs: 12,
            bindings: ["MEMORY"],
            resultJson: JSON.stringify(ExecuteResult.toJSON(resultOf(executionId))),
          }),
        ),
      };
  }
}

/** Appends `count` events of a kernel history to `workspace-<ws>`, in batches of 1,000. */
export async function seed(store: EventStore, ws: string, count: number): Promise<void> {
  for (let n = 0; n < count; n += 1000)
    await store.append(
      `workspace-${ws}`,
      Array.from({ length: Math.min(1000, count - n) }, (_, i) => historyEvent(n + i)),
      "any",
    );
}
