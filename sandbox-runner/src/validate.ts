import type { ExecuteStart } from "@gatehouse/proto";
import { InvalidArgumentError } from "./errors.ts";
import { effectiveLimits } from "./limits.ts";
import type { EffectiveLimits } from "./protocol.ts";

/** A checked `start` message. */
export interface ValidStart {
  executionId: string;
  code: string;
  /** Granted binding names, in request order, unique. */
  bindings: string[];
  limits: EffectiveLimits;
}

/** Largest snippet accepted, bytes of UTF-8. */
export const MAX_CODE_BYTES = 1024 * 1024;
const MAX_BINDINGS = 64;
const BINDING_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;
const EXECUTION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Checks an ExecuteStart and fills default limits.
 * @throws InvalidArgumentError naming the field (`start.execution_id`, `start.code`, `start.bindings[i].name`,
 *   `limits.*`) and the fix.
 */
export function validateStart(start: ExecuteStart): ValidStart {
  if (!EXECUTION_ID.test(start.executionId)) {
    throw new InvalidArgumentError(
      "start.execution_id must be 1-128 characters of letters, digits, '_', '.', ':' or '-'; send the kernel's execution id",
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
  });
  return {
    executionId: start.executionId,
    code: start.code,
    bindings: names,
    limits: effectiveLimits(start.limits),
  };
}
