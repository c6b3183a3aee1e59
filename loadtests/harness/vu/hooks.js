// @ts-check
/**
 * Module resolution hooks (node:module register) for a VU's worker: `k6`, `k6/http` and `k6/metrics`
 * resolve to the harness's implementations; any other `k6/...` module, and remote modules (k6 loads
 * https:// imports, e.g. jslib.k6.io), are refused naming the module. Everything else resolves as usual
 * (the script's own relative imports).
 */

/** @type {Record<string, string>} */
const MODULES = { k6: "k6.js", "k6/http": "http.js", "k6/metrics": "metrics.js" };
/** Same text as unsupported.js's UNSUPPORTED_MARK (hooks run on their own thread; errors cross as text). */
const MARK = "is not implemented by the Gatehouse k6 test harness";

/**
 * @param {string} specifier
 * @param {unknown} context
 * @param {(specifier: string, context: unknown) => Promise<{url: string}>} next
 */
export async function resolve(specifier, context, next) {
  const file = MODULES[specifier];
  if (file) return { url: new URL(`./modules/${file}`, import.meta.url).href, shortCircuit: true };
  if (specifier === "k6" || specifier.startsWith("k6/"))
    throw new Error(
      `module "${specifier}" ${MARK}; it implements: ${Object.keys(MODULES).join(", ")}. Run the script with k6 itself, or add the module to loadtests/harness.`,
    );
  if (/^https?:\/\//.test(specifier))
    throw new Error(
      `remote module "${specifier}" ${MARK} (it loads only local files); vendor the module next to the script`,
    );
  return next(specifier, context);
}
