import { type ExecuteStart, isGrantableMethodName } from "@gatehouse/proto";
import { InvalidArgumentError } from "./errors.ts";
import { effectiveLimits } from "./limits.ts";
import type { EffectiveLimits, GrantedMethods } from "./protocol.ts";

/** A checked `start` message. */
export interface ValidStart {
  executionId: string;
  /** The workspace whose sandbox runs the execution. */
  workspaceId: string;
  code: string;
  /** Granted bindings in request order, unique names; `methods` are the only callable names on `env[name]`. */
  bindings: GrantedMethods[];
  limits: EffectiveLimits;
}

/** Largest snippet accepted, bytes of UTF-8. */
export const MAX_CODE_BYTES = 1024 * 1024;
const MAX_BINDINGS = 64;
const MAX_METHODS = 512;
const BINDING_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;
const EXECUTION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const WORKSPACE_ID = EXECUTION_ID;

/**
 * Checks an ExecuteStart and fills default limits.
 * @throws InvalidArgumentError naming the field (`start.execution_id`, `start.workspace_id`, `start.code`,
 *   `start.bindings[i].name`, `limits.*`) and the fix.
 */
export function validateStart(start: ExecuteStart): ValidStart {
  if (!EXECUTION_ID.test(start.executionId)) {
    throw new InvalidArgumentError(
      "start.execution_id must be 1-128 characters of letters, digits, '_', '.', ':' or '-'; send the kernel's execution id",
    );
  }
  if (!WORKSPACE_ID.test(start.workspaceId)) {
    throw new InvalidArgumentError(
      "start.workspace_id must be 1-128 characters of letters, digits, '_', '.', ':' or '-'; send the id of the workspace the execution belongs to (its sandbox is never shared with another workspace)",
    );
  }
  if (start.code.trim() === "") {
    throw new InvalidArgumentError(
      "start.code is empty; send a module like `export default async (env) => { ... }`",
    );
  }
  if (Buffer.byteLength(start.code, "utf8") > MAX_CODE_BYTES) {
    throw new InvalidArgumentError(
      `start.code is larger than ${MAX_CODE_BYTES} bytes; send a smaller snippet`,
    );
  }
  if (start.bindings.length > MAX_BINDINGS) {
    throw new InvalidArgumentError(
      `start.bindings has ${start.bindings.length} entries; at most ${MAX_BINDINGS} are allowed`,
    );
  }
  const names: string[] = [];
  const granted: GrantedMethods[] = [];
  start.bindings.forEach((binding, i) => {
    const name = binding.name;
    if (!BINDING_NAME.test(name) || name in Object.prototype) {
      throw new InvalidArgumentError(
        `start.bindings[${i}].name is not usable as an env property; use a JavaScript identifier such as "MEMORY" that is not an Object.prototype member`,
      );
    }
    if (names.includes(name)) {
      throw new InvalidArgumentError(
        `start.bindings[${i}].name "${name}" is granted twice; send each binding once`,
      );
    }
    names.push(name);
    if (binding.methods.length > MAX_METHODS) {
      throw new InvalidArgumentError(`start.bindings[${i}].methods has more than ${MAX_METHODS} entries`);
    }
    binding.methods.forEach((method, j) => {
      if (!isGrantableMethodName(method)) {
        throw new InvalidArgumentError(
          `start.bindings[${i}].methods[${j}] (binding ${name}, method ${JSON.stringify(method.slice(0, 130))}) is not usable as a method name; use 1-128 visible ASCII characters, not an Object.prototype member or "then"`,
        );
      }
    });
    granted.push({ name, methods: [...new Set(binding.methods)] });
  });
  return {
    executionId: start.executionId,
    workspaceId: start.workspaceId,
    code: start.code,
    bindings: granted,
    limits: effectiveLimits(start.limits),
  };
}
