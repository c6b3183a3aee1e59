/**
 * Operations HTTP endpoint: `GET /metrics` (Prometheus text), `GET /healthz` (200 "ok" while
 * serving, 503 while shutting down) and, when `status` is given, `GET /status` (its value as JSON).
 * Binds to loopback by default.
 */
import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";

/** Starts the endpoint; resolves with the bound port and a close function. */
export async function startOpsHttp(opts: {
  host: string;
  port: number;
  registry: Registry;
  healthy: () => boolean;
  /** Optional service status served as JSON at /status (never put secrets in it). */
  status?: () => unknown;
}): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/metrics") {
      opts.registry.metrics().then(
        (text) => {
          res.writeHead(200, { "content-type": opts.registry.contentType });
          res.end(text);
        },
        () => {
          res.writeHead(500).end("metrics unavailable");
        },
      );
      return;
    }
    if (req.method === "GET" && req.url === "/healthz") {
      const ok = opts.healthy();
      res.writeHead(ok ? 200 : 503, { "content-type": "text/plain" }).end(ok ? "ok" : "shutting down");
      return;
    }
    if (req.method === "GET" && req.url === "/status" && opts.status) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(opts.status()));
      return;
    }
    res
      .writeHead(404, { "content-type": "text/plain" })
      .end(`not found: use /metrics or /healthz${opts.status ? " or /status" : ""}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : opts.port;
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
