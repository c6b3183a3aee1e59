import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";

/**
 * Starts the HTTP side server: GET /healthz -> 200 {"status":"ok","sandbox":mode}; GET /metrics -> Prometheus text.
 * @returns the server and its bound port.
 */
export async function startHealthServer(
  host: string,
  port: number,
  registry: Registry,
  mode: string,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/healthz") {
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ status: "ok", sandbox: mode }));
    } else if (req.method === "GET" && req.url === "/metrics") {
      registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  return { server, port: typeof address === "object" && address ? address.port : port };
}
