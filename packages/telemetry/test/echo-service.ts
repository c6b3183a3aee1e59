/**
 * A small real gRPC service for the tracing tests: unary `Echo` and bidi `Chat` (JSON messages), served
 * and called through grpc-js with a service's tracing applied as the services do it.
 */
import {
  type Client,
  credentials,
  makeGenericClientConstructor,
  Server,
  ServerCredentials,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
} from "@grpc/grpc-js";
import type { ServiceTracing } from "../src/index.ts";

const serialize = (v: unknown) => Buffer.from(JSON.stringify(v));
const deserialize = (b: Buffer) => JSON.parse(b.toString()) as unknown;
const codec = {
  requestSerialize: serialize,
  requestDeserialize: deserialize,
  responseSerialize: serialize,
  responseDeserialize: deserialize,
};

/** The service: Echo answers its request; Chat answers each message, and ends when the caller ends. */
export const EchoService = {
  echo: { path: "/test.Echo/Echo", requestStream: false, responseStream: false, ...codec },
  chat: { path: "/test.Echo/Chat", requestStream: true, responseStream: true, ...codec },
} satisfies ServiceDefinition;

const EchoClientCtor = makeGenericClientConstructor(EchoService, "Echo");

export interface EchoClient extends Client {
  echo(req: unknown, cb: (err: Error | null, res: unknown) => void): void;
  chat(): NodeJS.ReadWriteStream & { write(m: unknown): boolean; end(): void };
}

/**
 * Serves the service on a free loopback port with `tracing` (its SERVER spans); `onMessage` runs in each
 * handler's and each Chat message's context (the tests make child spans there).
 */
export async function serveEcho(
  tracing: ServiceTracing,
  onMessage: (where: "echo" | "chat") => void = () => {},
): Promise<{ port: number; close(): Promise<void> }> {
  const server = new Server();
  server.addService(
    EchoService,
    tracing.traceGrpcService(EchoService, {
      echo(call: ServerUnaryCall<unknown, unknown>, cb: sendUnaryData<unknown>) {
        onMessage("echo");
        cb(null, call.request);
      },
      chat(call: ServerDuplexStream<unknown, unknown>) {
        call.on("data", (m: unknown) => {
          onMessage("chat");
          call.write(m);
        });
        call.on("end", () => call.end());
      },
    }),
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return {
    port,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

/** A client of the service with `tracing`'s client options. */
export function echoClient(port: number, tracing: ServiceTracing): EchoClient {
  return new EchoClientCtor(
    `127.0.0.1:${port}`,
    credentials.createInsecure(),
    tracing.grpcClientOptions(),
  ) as unknown as EchoClient;
}

/** One Echo call as a promise. */
export function echo(client: EchoClient, req: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => client.echo(req, (err, res) => (err ? reject(err) : resolve(res))));
}

/** Sends `n` Chat messages one after another (each after the previous answer), then ends the stream. */
export function chat(client: EchoClient, n: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.chat();
    let got = 0;
    stream.on("data", () => {
      got++;
      if (got < n) stream.write({ i: got });
      else stream.end();
    });
    stream.on("error", reject);
    stream.on("end", () => resolve());
    stream.write({ i: 0 });
  });
}
