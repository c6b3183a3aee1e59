/**
 * The PostgreSQL gatekeeper (issue 17), first layer: resource URLs, the administrator's registry,
 * and the statement scope check. Not wired into a service yet.
 */
export * from "./errors.ts";
export * from "./registry.ts";
export * from "./resource-url.ts";
export * from "./statement-scope.ts";
