/** Process plumbing every Gatehouse service shares: gRPC server lifecycle and the ops HTTP endpoint. */
export { listenGrpc, stopGrpc } from "./grpc.ts";
export { startOpsHttp } from "./ops-http.ts";
export { stopOnSignals } from "./shutdown.ts";
