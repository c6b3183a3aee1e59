/**
 * A loopback TCP proxy a test can cut: while cut, open connections are destroyed and new ones are
 * accepted and closed at once — what a client sees when its database goes away mid-run.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private cutOff = false;
  /** The port the proxy listens on (127.0.0.1), after {@link start}. */
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  /** Listens on 127.0.0.1:<free port>. */
  async start(): Promise<this> {
    const server = createServer((client) => {
      if (this.cutOff) {
        client.destroy();
        return;
      }
      const upstream = createConnection(this.target);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const address = server.address();
    this.port = typeof address === "object" && address ? address.port : 0;
    return this;
  }

  /** Destroys every open connection and refuses new ones until {@link restore}. */
  cut(): void {
    this.cutOff = true;
    for (const s of this.sockets) s.destroy();
  }

  /** Passes connections through again. */
  restore(): void {
    this.cutOff = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
