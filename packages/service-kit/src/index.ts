/** Process plumbing every Gatehouse service shares: gRPC server lifecycle, the ops HTTP endpoint, the drain before a stop, host:port config, loopback port helpers, condition waits, child processes that die with their parent, pid files, and the TLS client settings of Temporal and NATS (TEMPORAL_TLS_*, NATS_TLS_*: env fields, PEM files, start-up diagnosis). */
export {
  childrenDieWithParent,
  describeProcess,
  type ProcessInfo,
  portHolder,
  processInfo,
  spawnTiedToParent,
  stopProcess,
} from "./child-processes.ts";
export { Drain, type DrainState, MAX_DRAIN_MS } from "./drain.ts";
export { InvalidConfiguration, parseEnv } from "./env.ts";
export {
  callUnary,
  listenGrpc,
  PEER_CALL_RESERVE_MS,
  PEER_CHANNEL_OPTIONS,
  peerReady,
  peerWaitMs,
  stopGrpc,
  type UnaryMethod,
} from "./grpc.ts";
export { hostPort, splitHostPort } from "./host-port.ts";
export {
  checkNatsTlsEnv,
  NATS_TLS_ENV,
  type NatsTlsEnv,
  type NatsTlsOptions,
  natsTls,
  natsUrlField,
} from "./nats-tls.ts";
export { startOpsHttp } from "./ops-http.ts";
export { keyMatchesCertificate, type PemFile, type PemKind, pemFileField, readPemFile } from "./pem-file.ts";
export { leftoverOf, type PidFileRecord, reapPidFile, removePidFile, writePidFile } from "./pid-file.ts";
export { canConnect, FREE_PORT_RANGE, freePort, waitForPort } from "./ports.ts";
export { stopOnSignals } from "./shutdown.ts";
export {
  checkTemporalTlsEnv,
  describeTemporalSecurity,
  TEMPORAL_TLS_ENV,
  type TemporalSecurity,
  type TemporalTlsConfig,
  type TemporalTlsEnv,
  temporalSecurity,
} from "./temporal-tls.ts";
export { probeTemporalTls, TemporalUnreachable, temporalUnreachable } from "./temporal-unreachable.ts";
export { type WaitUntilOptions, waitUntil } from "./wait.ts";
