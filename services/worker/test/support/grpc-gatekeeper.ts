/**
 * Serves a RecordingGatekeeper over the real gatekeeper gRPC service on 127.0.0.1, so a worker
 * running as its own process (and killed mid-call) reaches it through GrpcGatekeeperApplier.
 */

import {
  type ActionRejectedRequest,
  type ApplyActionProgress,
  type ApplyActionRequest,
  type ApplyActionsProgress,
  type ApplyActionsRequest,
  GatekeeperService,
} from "@gatehouse/proto";
import { listenGrpc, stopGrpc } from "@gatehouse/service-kit";
import {
  Server,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import type { RecordingGatekeeper } from "./recording-gatekeeper.ts";

/** Starts the server; resolves with its "host:port" and a close function. */
export async function serveGatekeeper(
  gatekeeper: RecordingGatekeeper,
): Promise<{ address: string; close(): Promise<void> }> {
  const server = new Server();
  server.addService(GatekeeperService, {
    applyAction(call: ServerWritableStream<ApplyActionRequest, ApplyActionProgress>) {
      // As the kit's applyStreamHandler does: `running` at once and every second, then the outcome.
      const started = Date.now();
      const running = () =>
        call.write({
          event: { $case: "running", running: { elapsedMs: Date.now() - started, nextWithinMs: 1000 } },
        });
      running();
      const timer = setInterval(running, 1000);
      gatekeeper.apply("mcp", call.request).then(
        (outcome) => {
          clearInterval(timer);
          call.write({ event: { $case: "outcome", outcome } });
          call.end();
        },
        (err: Error) => {
          clearInterval(timer);
          call.emit("error", { code: status.INTERNAL, details: err.message });
        },
      );
    },
    applyActions(call: ServerWritableStream<ApplyActionsRequest, ApplyActionsProgress>) {
      // As the contract says: per action `running` (at once, then every second), then its outcome.
      let current = 0;
      let started = Date.now();
      const running = () =>
        call.write({
          actionId: current,
          event: { $case: "running", running: { elapsedMs: Date.now() - started, nextWithinMs: 1000 } },
        });
      let timer: NodeJS.Timeout | undefined;
      gatekeeper
        .applyRun("mcp", call.request, {
          onRunning: (actionId) => {
            current = actionId;
            started = Date.now();
            running();
            clearInterval(timer);
            timer = setInterval(running, 1000);
          },
          onOutcome: (actionId, outcome) => {
            clearInterval(timer);
            call.write({ actionId, event: { $case: "outcome", outcome } });
          },
        })
        .then(
          (end) => {
            clearInterval(timer);
            if (end.lost) call.emit("error", { code: status.INTERNAL, details: end.lost.error.message });
            else call.end();
          },
          (err: Error) => {
            clearInterval(timer);
            call.emit("error", { code: status.INTERNAL, details: err.message });
          },
        );
    },
    actionRejected(call: ServerUnaryCall<ActionRejectedRequest, unknown>, callback: sendUnaryData<unknown>) {
      gatekeeper.notifyRejected("mcp", call.request).then(
        () => callback(null, {}),
        (err: Error) => callback({ code: status.INTERNAL, details: err.message }),
      );
    },
  });
  const port = await listenGrpc(server, "127.0.0.1", 0);
  return { address: `127.0.0.1:${port}`, close: () => stopGrpc(server, 100) };
}
