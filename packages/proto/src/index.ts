/**
 * Generated Gatehouse contracts (ts-proto, outputServices=grpc-js) from `proto/gatehouse/v1/`.
 * The generated files live in `src/gen/` and are rebuilt by `npm run build`; they are never committed.
 */

export * from "./gen/gatehouse/v1/agent.js";
export * from "./gen/gatehouse/v1/approval.js";
export * from "./gen/gatehouse/v1/common.js";
export * from "./gen/gatehouse/v1/connections.js";
export * from "./gen/gatehouse/v1/events.js";
export * from "./gen/gatehouse/v1/gatekeeper.js";
export * from "./gen/gatehouse/v1/kernel.js";
export * from "./gen/gatehouse/v1/sandbox.js";
export { isGrantableMethodName } from "./method-names.js";
