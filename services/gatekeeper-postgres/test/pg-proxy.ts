/**
 * Test helper: a TCP proxy (node:net) between the gatekeeper and PostgreSQL that forwards every
 * byte and reads the client's protocol messages, so a test can break a connection at an exact
 * point of an apply:
 *
 * - `cut-after-commit`: forwards the client's COMMIT (a simple-query 'Q' message; pg sends
 *   BEGIN/COMMIT that way), waits for the server's answer up to its ReadyForQuery ('Z'), so the
 *   commit happened, then destroys both sides without forwarding the answer; with `refuse`, the
 *   proxy then stops listening too (a database that is gone after the commit);
 * - `stall-after-commit`: forwards COMMIT and drops every server byte after it (no answer ever comes);
 * - `stall-on`: holds the first client message whose SQL matches, and everything after it;
 * - `kill-on`: forwards the first client message whose SQL matches ('Q', or an extended-protocol
 *   Parse 'P' and the messages up to its Sync 'S'), waits for `when()` (e.g. until the server
 *   runs the statement), then destroys both sides (a server killed mid-statement).
 *
 * Client messages: after the startup packet (int32 length, int32 code; an SSLRequest is followed
 * by a second startup), each message is a type byte, an int32 length including itself, a body.
 */
import net from "node:net";

/** What the proxy does to the connection on which the trigger is seen. */
export type ProxyFault =
  | { kind: "pass" }
  | { kind: "cut-after-commit"; refuse?: boolean }
  | { kind: "stall-after-commit" }
  | { kind: "stall-on"; match: RegExp }
  | { kind: "kill-on"; match: RegExp; when?: () => Promise<void> };

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** The SQL text of a 'Q' (query) or 'P' (Parse: name, then query) message body, or "". */
function sqlOf(type: string, body: Buffer): string {
  if (type === "Q") return body.toString("utf8", 0, Math.max(0, body.indexOf(0)));
  if (type === "P") {
    const nameEnd = body.indexOf(0);
    return body.toString("utf8", nameEnd + 1, Math.max(nameEnd + 1, body.indexOf(0, nameEnd + 1)));
  }
  return "";
}

/** A running proxy to 127.0.0.1:`target`. */
export class PgProxy {
  /** What happens at the trigger; set before the apply. Fires once, then the proxy passes again. */
  fault: ProxyFault = { kind: "pass" };
  /** What the proxy did, in order: "commit-forwarded", "commit-answered", "cut", "stalled", "killed", "refusing". */
  readonly events: string[] = [];
  readonly #server = net.createServer((c) => this.#accept(c));
  readonly #sockets = new Set<net.Socket>();
  port = 0;

  private constructor(readonly target: number) {}

  /** Starts a proxy on a free loopback port. */
  static async start(target: number): Promise<PgProxy> {
    const p = new PgProxy(target);
    await new Promise<void>((res) => p.#server.listen(0, "127.0.0.1", res));
    p.port = (p.#server.address() as net.AddressInfo).port;
    return p;
  }

  /** Stops listening (new connections are refused) and destroys every connection. */
  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    if (this.#server.listening) await new Promise<void>((res) => this.#server.close(() => res()));
  }

  #accept(client: net.Socket): void {
    const upstream = net.connect(this.target, "127.0.0.1");
    for (const s of [client, upstream]) {
      this.#sockets.add(s);
      s.on("close", () => this.#sockets.delete(s));
      s.on("error", () => {});
    }
    const both = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());

    let startup = true;
    let pending = Buffer.alloc(0);
    let holding = false;
    let killing: (() => Promise<void>) | undefined;
    // Server → client: what happens to the server's bytes after a COMMIT was forwarded.
    let afterCommit: "pass" | "cut" | "cut-refuse" | "drop" = "pass";
    let answer = Buffer.alloc(0);

    upstream.on("data", (d: Buffer) => {
      if (afterCommit === "pass") {
        client.write(d);
        return;
      }
      if (afterCommit === "drop") return;
      answer = Buffer.concat([answer, d]);
      // The answer to COMMIT ends with ReadyForQuery: 'Z', int32 5, a status byte.
      const z = answer.length - 6;
      if (z >= 0 && answer[z] === 0x5a && answer.readInt32BE(z + 1) === 5) {
        this.events.push("commit-answered");
        const refuse = afterCommit === "cut-refuse";
        afterCommit = "drop";
        both();
        this.events.push("cut");
        if (refuse) {
          this.events.push("refusing");
          void this.close();
        }
      }
    });

    client.on("data", (d: Buffer) => {
      if (holding) return;
      pending = Buffer.concat([pending, d]);
      for (;;) {
        if (startup) {
          if (pending.length < 8) return;
          const len = pending.readInt32BE(0);
          if (pending.length < len) return;
          const code = pending.readInt32BE(4);
          upstream.write(pending.subarray(0, len));
          pending = pending.subarray(len);
          if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) startup = false;
          continue;
        }
        if (pending.length < 5) return;
        const len = pending.readInt32BE(1);
        if (pending.length < len + 1) return;
        const type = String.fromCharCode(pending[0]!);
        const message = pending.subarray(0, len + 1);
        const sql = sqlOf(type, message.subarray(5));
        pending = pending.subarray(len + 1);
        const f = this.fault;
        if (f.kind === "stall-on" && f.match.test(sql)) {
          this.fault = { kind: "pass" };
          holding = true;
          this.events.push("stalled");
          return;
        }
        if (f.kind === "kill-on" && f.match.test(sql)) {
          this.fault = { kind: "pass" };
          killing = f.when ?? (async () => {});
        }
        if (killing && (type === "Q" || type === "S")) {
          const when = killing;
          upstream.write(message, () => {
            void when().finally(() => {
              this.events.push("killed");
              both();
            });
          });
          holding = true;
          return;
        }
        const commit = type === "Q" && /^\s*COMMIT\b/i.test(sql);
        if (commit && (f.kind === "cut-after-commit" || f.kind === "stall-after-commit")) {
          this.fault = { kind: "pass" };
          afterCommit = f.kind === "stall-after-commit" ? "drop" : f.refuse ? "cut-refuse" : "cut";
          upstream.write(message);
          this.events.push("commit-forwarded");
          continue;
        }
        upstream.write(message);
      }
    });
  }
}
