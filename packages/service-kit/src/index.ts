/** Process plumbing every Gatehouse service shares: gRPC server lifecycle, the ops HTTP endpoint, host:port config, loopback port helpers, condition waits. */
export { InvalidConfiguration, parseEnv } from "./env.ts";
export { callUnary, listenGrpc, stopGrpc, type UnaryMethod } from "./grpc.ts";
export { hostPort, splitHostPort } from "./host-port.ts";
export { startOpsHttp } from "./ops-http.ts";
export { canConnect, freePort, waitForPort } from "./ports.ts";
export { stopOnSignals } from "./shutdown.ts";
export { type WaitUntilOptions, waitUntil } from "./wait.ts";
