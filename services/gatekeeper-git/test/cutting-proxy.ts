/**
 * An HTTP proxy on loopback in front of a git smart-HTTP server, for apply outcome tests: it
 * forwards every request as it is, except a push's pack request (POST .../git-receive-pack), which
 * it can forward and then cut the client's connection once the server answered (the push
 * happened, the pusher never hears it; every time, or only the first, so a resend gets through),
 * or swallow and never answer (a remote that stalls). It can
 * also go "down" (every later connection is cut at once) or close its port.
 */
import { createServer, request, type Server } from "node:http";
import type { Socket } from "node:net";

/** What the proxy does with a push's pack request. */
export type PushMode = "forward" | "cut-after-answer" | "cut-first-answer" | "stall";

export interface CuttingProxy {
  /** Base URL, e.g. "http://127.0.0.1:43123/". */
  url: string;
  /** What happens to the next pack requests. */
  pushMode: PushMode;
  /** When true, every request is cut at once (the remote went away). */
  down: boolean;
  /** Pack requests whose server answer was complete and then cut before the client got it. */
  cutAfterAnswer: number;
  /** Pack requests swallowed without an answer. */
  stalled: number;
  /** Closes the port (a later connection is refused). */
  close(): Promise<void>;
}

/** Starts a proxy forwarding to `target` (e.g. "http://127.0.0.1:1234/"). */
export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  const proxy: CuttingProxy = {
    url: "",
    pushMode: "forward",
    down: false,
    cutAfterAnswer: 0,
    stalled: 0,
    close: () =>
      new Promise<void>((ok) => {
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
  const server: Server = createServer((req, res) => {
    if (proxy.down) {
      req.socket.destroy();
      return;
    }
    const isPack = req.method === "POST" && (req.url ?? "").endsWith("/git-receive-pack");
    if (isPack && proxy.pushMode === "stall") {
      proxy.stalled++;
      req.resume(); // read the pack, never answer
      return;
    }
    const up = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: to.host },
      },
      (answer) => {
        const cut =
          proxy.pushMode === "cut-after-answer" ||
          (proxy.pushMode === "cut-first-answer" && proxy.cutAfterAnswer === 0);
        if (isPack && cut) {
          // The server finished the push (its answer is complete); the pusher never hears it.
          answer.resume();
          answer.on("end", () => {
            proxy.cutAfterAnswer++;
            req.socket.destroy();
          });
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on("error", () => req.socket.destroy());
    req.pipe(up);
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  proxy.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return proxy;
}
