/**
 * TEST ONLY: a TLS-terminating TCP proxy in front of the Temporal dev server, which has no TLS flags.
 * It accepts TLS (ALPN h2, the server certificate given; with `clientCaFile` it requires and verifies
 * a client certificate, i.e. mTLS) and pipes the decrypted bytes to the dev server's plaintext port.
 * Stands in for a TLS-serving Temporal (Temporal Cloud, a frontend with tls.frontend configured).
 */
import { readFileSync } from "node:fs";
import { connect as connectTcp } from "node:net";
import { createServer, type TLSSocket } from "node:tls";
import { freePort } from "@gatehouse/service-kit";

/** A running proxy. */
export interface TlsProxy {
  /** "127.0.0.1:<port>", the TLS address clients dial. */
  address: string;
  /** TLS handshakes that failed (e.g. "no client certificate", an unknown CA alert), in order. */
  handshakeErrors: string[];
  /** Handshakes that completed. */
  accepted(): number;
  close(): Promise<void>;
}

/** Starts the proxy on a free loopback port, forwarding to `target` ("host:port", plaintext). */
export async function startTlsProxy(options: {
  target: string;
  certFile: string;
  keyFile: string;
  clientCaFile?: string;
}): Promise<TlsProxy> {
  const [host, port] = options.target.split(":") as [string, string];
  const handshakeErrors: string[] = [];
  let accepted = 0;
  const sockets = new Set<TLSSocket>();
  const server = createServer(
    {
      cert: readFileSync(options.certFile),
      key: readFileSync(options.keyFile),
      ALPNProtocols: ["h2"],
      ...(options.clientCaFile
        ? { ca: readFileSync(options.clientCaFile), requestCert: true, rejectUnauthorized: true }
        : {}),
    },
    (tls) => {
      accepted += 1;
      sockets.add(tls);
      const upstream = connectTcp(Number(port), host);
      tls.pipe(upstream).pipe(tls);
      const end = () => {
        tls.destroy();
        upstream.destroy();
        sockets.delete(tls);
      };
      tls.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    },
  );
  server.on("tlsClientError", (err) => handshakeErrors.push(err.message));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    void freePort().then((port) => server.listen(port, "127.0.0.1", () => resolve()), reject);
  });
  const bound = server.address();
  if (!bound || typeof bound === "string") throw new Error("the TLS proxy did not bind a TCP port");
  return {
    address: `127.0.0.1:${bound.port}`,
    handshakeErrors,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
