/**
 * What the apply protocol's tests share: a Gatekeeper gRPC server on loopback serving the handlers
 * a test gives it, and the errors a gatekeeper plugs into the server half (`TEST_ERRORS`, the
 * shape of the gatekeeper kit's: a refusal keeps its message and status, anything else is INTERNAL).
 */
import { GatekeeperClient, type GatekeeperServer, GatekeeperService } from "@gatehouse/proto";
import { credentials, Server, ServerCredentials, type ServiceError, status } from "@grpc/grpc-js";
import type { ApplyErrors } from "../src/server.ts";

/** A refusal before the external call (INVALID_ARGUMENT with its message), as a gatekeeper throws one. */
export class InvalidRequest extends Error {
  override name = "InvalidRequest";
}

/** The errors of the tests' gatekeepers: InvalidRequest → INVALID_ARGUMENT, anything else INTERNAL. */
export const TEST_ERRORS: ApplyErrors = {
  notSentMessage: () => undefined,
  toStatus: (err) =>
    err instanceof InvalidRequest
      ? { code: status.INVALID_ARGUMENT, details: err.message, message: err.message }
      : { code: status.INTERNAL, details: "internal gatekeeper error (see gatekeeper logs)" },
  logUnexpected: (logger, method, err) => {
    if (!(err instanceof InvalidRequest))
      logger.error({ event: "rpc.internal_error", method }, "unexpected error");
  },
  invalidRequest: (message) => new InvalidRequest(message),
};

const unimplemented = (_call: unknown, cb: (e: Partial<ServiceError>) => void) =>
  cb({ code: status.UNIMPLEMENTED, details: "not used by this test" });
const unimplementedStream = (call: { emit(event: "error", e: Partial<ServiceError>): unknown }) => {
  call.emit("error", { code: status.UNIMPLEMENTED, details: "not used by this test" });
};

/**
 * A Gatekeeper gRPC server on loopback implementing `impl` (ApplyAction, ApplyActions); every RPC
 * it leaves out answers UNIMPLEMENTED. Returns a client for it and its "127.0.0.1:port".
 */
export async function startGatekeeper(
  impl: Partial<GatekeeperServer>,
): Promise<{ client: GatekeeperClient; address: string; close(): void }> {
  const server = new Server();
  server.addService(GatekeeperService, {
    resolveResource: unimplemented,
    openSession: unimplementedStream,
    applyAction: unimplementedStream,
    applyActions: unimplementedStream,
    actionRejected: unimplemented,
    prepareRevert: unimplemented,
    checkObserver: unimplemented,
    ...impl,
  } satisfies GatekeeperServer);
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
  );
  const client = new GatekeeperClient(`127.0.0.1:${port}`, credentials.createInsecure());
  return {
    client,
    address: `127.0.0.1:${port}`,
    close() {
      client.close();
      server.forceShutdown();
    },
  };
}
