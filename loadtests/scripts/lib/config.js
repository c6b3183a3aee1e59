// @ts-check
/**
 * What every scenario reads from the environment (`k6 run -e NAME=value`, or the harness's `--env`):
 * the deployment to drive and the people to drive it as. Read in the init context, so a missing
 * token stops the run before any VU starts, naming the variable.
 */

/**
 * The value of `name`, or `fallback` when it is unset or empty.
 * @param {string} name
 * @param {string} fallback
 */
export function env(name, fallback) {
  const v = __ENV[name];
  return v === undefined || v === "" ? fallback : v;
}

/**
 * A required variable. @throws Error naming it and what it is for.
 * @param {string} name
 * @param {string} what
 */
export function requiredEnv(name, what) {
  const v = __ENV[name];
  if (v === undefined || v === "") throw new Error(`set ${name}: ${what}`);
  return v;
}

/**
 * A positive whole number from the environment. @throws Error naming the variable.
 * @param {string} name
 * @param {number} fallback
 */
export function envInt(name, fallback) {
  const raw = env(name, String(fallback));
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return n;
}

/**
 * A list of positive numbers, comma-separated (e.g. "1,2,4"). @throws Error naming the variable.
 * @param {string} name
 * @param {number[]} fallback
 */
export function envNumbers(name, fallback) {
  const raw = env(name, fallback.join(","));
  const out = raw.split(",").map((s) => Number(s.trim()));
  if (out.length === 0 || out.some((n) => !Number.isFinite(n) || n <= 0))
    throw new Error(`${name} must be positive numbers separated by commas, e.g. "1,2,4", got "${raw}"`);
  return out;
}

/** The gateway's origin, e.g. https://gatehouse.example.com (no trailing slash). */
export const BASE_URL = env("GATEHOUSE_URL", "http://127.0.0.1:8780").replace(/\/+$/, "");
if (!/^https?:\/\/[^\s/?#]+$/.test(BASE_URL))
  throw new Error(
    `GATEHOUSE_URL must be the gateway's origin, http(s)://host[:port] with no path, e.g. http://127.0.0.1:8780; got "${BASE_URL}"`,
  );

/** Bearer token of the person whose agents run snippets (OIDC token or dev token). */
export const AGENT_TOKEN = requiredEnv(
  "GATEHOUSE_AGENT_TOKEN",
  "the bearer token of the person whose agents run snippets (a dev token of gatehouse dev, e.g. dev-admin's, or an OIDC token)",
);

/** Bearer token of the approver: creates the load test's workspaces, accepts connections, decides. */
export const APPROVER_TOKEN = requiredEnv(
  "GATEHOUSE_APPROVER_TOKEN",
  "the bearer token of a person with the approver (or admin) role, e.g. dev-approver's dev token",
);

/** The resource each workspace asks for: an MCP server with the memory server's tools. */
export const RESOURCE_URL = env("GATEHOUSE_RESOURCE_URL", "mcp://memory");

/** Which load shape: smoke (short, few VUs), load (the sustained rate), knee (stepped up until p99 breaks). */
export const PROFILE = env("PROFILE", "smoke");
if (!["smoke", "load", "knee"].includes(PROFILE))
  throw new Error(`PROFILE must be smoke, load or knee, got "${PROFILE}"`);

/** How long the smoke and load profiles run, a k6 duration (e.g. "20s", "2m"). */
export const DURATION = env("DURATION", PROFILE === "smoke" ? "20s" : "2m");

/** A label in the workspaces' names, so a deployment's people can tell load-test workspaces apart. */
export const RUN_LABEL = env("RUN_LABEL", "loadtest");
