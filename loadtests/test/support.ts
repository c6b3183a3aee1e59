/** What the harness's own tests share: a script written to a temp file, a loopback HTTP server, sample files. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunResult, runScript } from "../harness/controller/run.ts";

/** A k6 script's text in a temp dir; `cleanup` removes it. */
export function scriptFile(text: string): { path: string; dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-harness-"));
  const path = join(dir, "script.js");
  writeFileSync(path, text);
  return { path, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** One sample line of `--out json`. */
export interface Point {
  metric: string;
  time: number;
  value: number;
  tags: Record<string, string>;
}

/** Runs `text` on the harness with `env`; returns the result and every sample. */
export async function runText(
  text: string,
  env: Record<string, string> = {},
): Promise<{ result: RunResult; points: Point[] }> {
  const s = scriptFile(text);
  const out = join(s.dir, "samples.jsonl");
  try {
    const result = await runScript({ script: s.path, env, outJson: out, log: () => {} });
    const points = readFileSync(out, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const p = JSON.parse(l);
        return { metric: p.metric, time: Date.parse(p.data.time), value: p.data.value, tags: p.data.tags };
      });
    return { result, points };
  } finally {
    s.cleanup();
  }
}

/** A loopback HTTP server answering with `handler`; `url` is its origin. */
export async function loopbackServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; server: Server; close: () => Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
