/**
 * Validation of tool arguments against the tool's input JSON Schema (MCP spec, "Tools":
 * `inputSchema` is a JSON Schema object). Schemas that declare draft 2020-12 use Ajv2020; others
 * use Ajv's default draft-07. Validation happens before anything is recorded or sent.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { ArgumentsInvalid } from "./errors.ts";

type AddFormats = (ajv: Ajv | Ajv2020) => unknown;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as unknown as AddFormats;

const options = { strict: false, allErrors: true, validateSchema: false, logger: false } as const;
const ajv07 = new Ajv(options);
const ajv2020 = new Ajv2020(options);
addFormats(ajv07);
addFormats(ajv2020);

const cache = new WeakMap<object, ValidateFunction>();

/** A compiled validator for `schema`; compiled once per schema object. @throws ArgumentsInvalid if it cannot compile. */
export function validatorFor(tool: string, schema: Record<string, unknown>): ValidateFunction {
  const hit = cache.get(schema);
  if (hit) return hit;
  const engine = typeof schema.$schema === "string" && schema.$schema.includes("2020-12") ? ajv2020 : ajv07;
  let fn: ValidateFunction;
  try {
    fn = engine.compile(schema);
  } catch {
    throw new ArgumentsInvalid(
      `the server's input schema for tool "${tool}" cannot be compiled; the tool cannot be called`,
    );
  }
  cache.set(schema, fn);
  return fn;
}

/**
 * Checks `args` against the tool's input schema.
 * @throws ArgumentsInvalid listing each failing path (e.g. "/entities/0/name must be string").
 */
export function validateArguments(tool: string, schema: Record<string, unknown>, args: unknown): void {
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    throw new ArgumentsInvalid(`arguments of ${tool} must be an object, e.g. ${tool}({ ... })`);
  }
  const validate = validatorFor(tool, schema);
  if (validate(args)) return;
  const problems = (validate.errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath || "(arguments)"} ${e.message ?? "is invalid"}`);
  throw new ArgumentsInvalid(`arguments of ${tool} do not match its input schema: ${problems.join("; ")}`);
}
