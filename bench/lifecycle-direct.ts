/**
 * The baselines of `npm run bench:lifecycle` that involve no Gatehouse code: an MCP SDK client calling
 * its own server-memory process (the server the stack's gatekeeper-mcp runs) directly, over stdio.
 */
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type Stats, stats } from "./support.ts";

const SERVER_MEMORY = join(
  resolve(fileURLToPath(import.meta.url), "../.."),
  "node_modules/@modelcontextprotocol/server-memory/dist/index.js",
);

/** An MCP SDK client connected to a fresh server-memory process keeping its graph in `file`. */
async function memoryServer(file: string, name: string): Promise<Client> {
  const client = new Client({ name, version: "0.1.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [SERVER_MEMORY],
      env: { ...getDefaultEnvironment(), MEMORY_FILE_PATH: file },
      stderr: "ignore",
    }),
  );
  return client;
}

/**
 * `n` create_entities and `n` open_nodes calls, alternating, on a fresh server-memory process (graph in
 * `file`); ms of each call, the first `warmup` of each left out.
 */
export async function directMcp(
  file: string,
  n: number,
  warmup: number,
): Promise<{ write: Stats; read: Stats }> {
  const client = await memoryServer(file, "gatehouse-bench");
  try {
    const write: number[] = [];
    const read: number[] = [];
    for (let i = 0; i < n; i++) {
      let t = performance.now();
      await client.callTool({
        name: "create_entities",
        arguments: { entities: [{ name: `direct-${i}`, entityType: "bench", observations: [] }] },
      });
      if (i >= warmup) write.push(performance.now() - t);
      t = performance.now();
      await client.callTool({ name: "open_nodes", arguments: { names: ["direct-probe"] } });
      if (i >= warmup) read.push(performance.now() - t);
    }
    return { write: stats(write), read: stats(read) };
  } finally {
    await client.close();
  }
}

/**
 * The floor of the batch figures: the same writes the batches apply (`create_entities` of one entity
 * each, `<prefix>-<i>`), sent one after another straight to a fresh server-memory process (graph in
 * `file`), batch after batch in the bench's order, so the server's file grows as the stack's server's
 * does (server-memory reads and rewrites its whole file per call).
 * @returns wall ms of each batch, in order. @throws when a call answers isError.
 */
export async function mcpFloor(file: string, batches: { prefix: string; n: number }[]): Promise<number[]> {
  const client = await memoryServer(file, "gatehouse-bench-floor");
  try {
    const wall: number[] = [];
    for (const { prefix, n } of batches) {
      const t = performance.now();
      for (let i = 0; i < n; i++) {
        const r = await client.callTool({
          name: "create_entities",
          arguments: { entities: [{ name: `${prefix}-${i}`, entityType: "bench", observations: [] }] },
        });
        if (r.isError) throw new Error(`floor: create_entities of ${prefix}-${i} failed`);
      }
      wall.push(performance.now() - t);
    }
    return wall;
  } finally {
    await client.close();
  }
}
