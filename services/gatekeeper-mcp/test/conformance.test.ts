/**
 * The kit's gatekeeper conformance suite against the MCP gatekeeper and the REAL memory MCP server
 * (stdio, behind the counting tee that records each tools/call reaching it), one harness for every
 * case. The binding is scoped to read_graph, search_nodes and create_entities (`#tool=`); writes
 * are create_entities of an entity named after the case's marker.
 *
 * MCP writes are never simulated (AWAIT): the MCP gatekeeper has no overlay of pending writes, so
 * what a new session sees of them is the server's graph and each pending action's status, which
 * the restart case compares.
 */
import { join } from "node:path";
import { gatekeeperConformance } from "@gatehouse/gatekeeper-kit/conformance";
import {
  countedStdio,
  MEMORY_SERVER,
  openBinding,
  startHarness,
  tempDir,
  toolCallsReachingServer,
} from "./helpers.ts";

const URL = "mcp://memory#tool=read_graph&tool=search_nodes&tool=create_entities";

gatekeeperConformance({
  name: "mcp",
  async start() {
    const tmp = tempDir();
    const countFile = join(tmp.dir, "calls.txt");
    const h = await startHarness({
      servers: {
        memory: countedStdio(countFile, MEMORY_SERVER, [], {
          MEMORY_FILE_PATH: join(tmp.dir, "memory.jsonl"),
        }),
      },
    });
    const sessions: { close(): void }[] = [];
    const session = () => {
      const b = openBinding(h.client, "MEMORY", URL, "vetted");
      sessions.push(b);
      return b.stub;
    };
    const pending = new Map<number, string>();
    return {
      approval: h.approval,
      client: () => h.client,
      workspaceId: "ws-1",
      binding: "MEMORY",
      url: URL,
      trust: "vetted",
      read: () => session().read_graph(),
      // Arguments the tool's input schema refuses: the gatekeeper refuses before calling the server.
      failingRead: () => session().search_nodes({ query: 42 }),
      outOfScopeIds: { existing: "delete_entities", missing: "no_such_tool" },
      outOfScopeRead: (which) =>
        which === "existing" ? session().delete_entities({ entityNames: ["x"] }) : session().no_such_tool({}),
      async stageWrite(marker) {
        const res = (await session().create_entities({
          entities: [{ name: marker, entityType: "conformance", observations: [] }],
        })) as { actionId: number };
        pending.set(res.actionId, marker);
        return h.approval.submissions.find((s) => s.actionId === res.actionId)!.localId;
      },
      effects: async (marker) =>
        toolCallsReachingServer(countFile).filter(
          (c) => c.name === "create_entities" && c.argumentsJson.includes(JSON.stringify(marker)),
        ).length,
      async overlay() {
        const stub = session();
        const graph = await stub.read_graph();
        const actions: Record<string, unknown> = {};
        for (const [id, marker] of pending) {
          if (!h.approval.settled.has(id)) actions[marker] = await stub.getActionResult(id);
        }
        return { graph, actions };
      },
      async restart() {
        for (const s of sessions.splice(0)) s.close();
        await h.restart();
      },
      async close() {
        for (const s of sessions) s.close();
        await h.close();
        tmp.remove();
      },
    };
  },
});
