/** Process plumbing every Gatehouse service shares: gRPC server lifecycle, the ops HTTP endpoint, host:port config, loopback port helpers, condition waits, child processes that die with their parent and pid files. */
export {
  childrenDieWithParent,
  describeProcess,
  type ProcessInfo,
  portHolder,
  processInfo,
  spawnTiedToParent,
  stopProcess,
} from "./child-processes.ts";
export { InvalidConfiguration, parseEnv } from "./env.ts";
export { callUnary, listenGrpc, stopGrpc, type UnaryMethod } from "./grpc.ts";
export { hostPort, splitHostPort } from "./host-port.ts";
export { startOpsHttp } from "./ops-http.ts";
export { leftoverOf, type PidFileRecord, reapPidFile, removePidFile, writePidFile } from "./pid-file.ts";
export { canConnect, FREE_PORT_RANGE, freePort, waitForPort } from "./ports.ts";
export { stopOnSignals } from "./shutdown.ts";
export { type WaitUntilOptions, waitUntil } from "./wait.ts";
