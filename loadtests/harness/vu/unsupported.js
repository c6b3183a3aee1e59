// @ts-check
/**
 * How the harness says "the script uses a part of the k6 API this test harness does not implement":
 * an error that names the module and export (or option), listing what is implemented. The VU reports
 * it as fatal and the run stops with exit code 104, so a gap never passes as a slow or failed request.
 */

/** The phrase every such error carries (errors from the module hooks cross threads as plain text). */
export const UNSUPPORTED_MARK = "is not implemented by the Gatehouse k6 test harness";

/** A k6 API the harness lacks. `name` is "HarnessUnsupported" so the controller can tell it apart. */
export class HarnessUnsupported extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "HarnessUnsupported";
  }
}

/**
 * `api`, wrapped so that reading any other property throws HarnessUnsupported naming it.
 * @template {object} T
 * @param {string} moduleName e.g. "k6/http"
 * @param {T} api the implemented exports
 * @returns {T}
 */
export function strictModule(moduleName, api) {
  return strictObject(`${moduleName}'s export`, api, `import from "${moduleName}"`);
}

/**
 * `target`, wrapped so that reading a property it lacks throws HarnessUnsupported naming it.
 * @template {object} T
 * @param {string} what e.g. "Response property"
 * @param {T} target
 * @param {string} where e.g. "http.get(...)'s Response"
 * @returns {T}
 */
export function strictObject(what, target, where) {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      if (typeof prop === "symbol" || prop in obj || prop === "then" || prop === "toJSON")
        return Reflect.get(obj, prop, receiver);
      throw new HarnessUnsupported(
        `${what} "${prop}" (${where}) ${UNSUPPORTED_MARK}; it implements: ${Object.keys(obj).join(", ")}. Run the script with k6 itself, or add it to loadtests/harness.`,
      );
    },
  });
}
