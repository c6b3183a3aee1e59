/**
 * Observation append, measured directly: the k6 scenarios cannot see it (it happens inside a read, before
 * the data reaches the snippet). Appends `count` observation-sized events one by one (about 600 bytes
 * of JSON, like an ObservationRecorded of the memory server's open_nodes) to one workspace stream of a
 * fresh embedded SQLite event store — the backend `gatehouse dev` uses — each with its exact expected
 * revision (hash chain and checks included), after a warm-up; returns the per-append times.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openEventStore } from "@gatehouse/event-store";

/** ms of each of `count` appends (after 50 untimed ones). */
export async function observationAppendMs(count = 2000): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-observation-append-"));
  const store = await openEventStore(`sqlite:${join(dir, "events.sqlite")}`);
  try {
    const stream = "workspace-wloadtest";
    const out: number[] = [];
    for (let i = 0; i < count + 50; i++) {
      const event = {
        type: "ObservationRecorded",
        data: {
          workspaceId: "wloadtest",
          binding: "MEMORY",
          gatekeeper: "mcp",
          title: `MEMORY.open_nodes({"names":["lt-${i}-0"]})`,
          summary: "Read 0 entities and 0 relations from the knowledge graph.".repeat(6),
          caller: { kind: "agent", id: "00000000-0000-4000-8000-000000000000" },
          restricted: false,
        },
        metadata: { actor: "user:dev-admin" },
      };
      const began = performance.now();
      await store.append(stream, [event], i === 0 ? "no_stream" : i - 1);
      if (i >= 50) out.push(performance.now() - began);
    }
    return out;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
