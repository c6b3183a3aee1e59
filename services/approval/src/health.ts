/** Small HTTP endpoint: GET /healthz (200 "ok" while serving) and GET /metrics (Prometheus text). */
import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";

/**
 * Starts the health/metrics server on host:port (port 0 = any free port).
 * @returns the bound port and a close function.
 */
export async function startHealthServer(
  registry: Registry,
  host: string,
  port: number,
  isHealthy: () => boolean,
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/healthz") {
      const ok = isHealthy();
      res.writeHead(ok ? 200 : 503, { "content-type": "text/plain" }).end(ok ? "ok\n" : "unavailable\n");
      return;
    }
    if (req.method === "GET" && req.url === "/metrics") {
      registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found: use /healthz or /metrics\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
