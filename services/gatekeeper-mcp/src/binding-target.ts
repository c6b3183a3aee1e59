/**
 * The capnweb main object of a binding session. capnweb exposes an RpcTarget's PROTOTYPE
 * properties (never own properties, never Object.prototype names), so a class is generated per
 * session with exactly one prototype method per permitted tool plus `getActionResult`. Nothing
 * else is callable: a call to any other name fails in capnweb before reaching this code, and
 * certainly before reaching the MCP server.
 */
import { RpcTarget } from "capnweb";
import type { BindingService } from "./binding-service.ts";
import type { Catalog } from "./catalog.ts";

/** Creates the main object for `service`, with methods for the tools in `catalog`. */
export function createBindingTarget(service: BindingService, catalog: Catalog): RpcTarget {
  class BindingTarget extends RpcTarget {}
  const define = (name: string, fn: (...args: unknown[]) => unknown) =>
    Object.defineProperty(BindingTarget.prototype, name, {
      value: fn,
      enumerable: false,
      writable: false,
      configurable: false,
    });
  for (const [name, entry] of catalog.tools) {
    if (entry.classification.kind === "read") {
      define(name, (args?: unknown) => service.read(name, args));
    } else {
      define(name, (args?: unknown, options?: unknown) => service.write(name, args, options));
    }
  }
  define("getActionResult", (actionId?: unknown) => service.getActionResult(actionId));
  return new BindingTarget();
}

/** The method names a binding exposes (permitted tools sorted, then getActionResult). */
export function bindingMethodNames(catalog: Catalog): string[] {
  return [...[...catalog.tools.keys()].sort(), "getActionResult"];
}
