/**
 * The contract's rule for `GrantedBinding.methods` (sandbox.proto): which names a binding method may
 * have. The sandbox runner refuses a start message granting any other name, and gatekeeper-mcp
 * grants no method to a tool named otherwise, so one oddly named tool never makes a workspace's
 * runs fail.
 */

/**
 * 1-128 visible ASCII characters, as the MCP specification's tool-name guidance has them (letters,
 * digits, `_`, `-`, `.`, `/`, ...): no space, control or non-ASCII character. The binding's .d.ts
 * quotes a name that is not a JavaScript identifier (`env.EV["get-env"](...)`).
 */
const GRANTABLE = /^[\x21-\x7e]{1,128}$/;

/**
 * True when `name` may be a granted method name: it matches the pattern above, is not a member of
 * `Object.prototype` (`constructor`, `__proto__`, `toString`, ...: they would shadow the object's
 * own machinery) and is not `then` (which would make the binding look like a promise).
 */
export function isGrantableMethodName(name: string): boolean {
  return GRANTABLE.test(name) && name !== "then" && !(name in Object.prototype);
}
