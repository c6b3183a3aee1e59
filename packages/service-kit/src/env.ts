/** Validating a service's environment variables (configuration comes from the environment and is validated at start-up). */
import type { z } from "zod";

/** The environment did not match the service's schema; the message lists each wrong variable and the fix. */
export class InvalidConfiguration extends Error {
  override name = "InvalidConfiguration";
  constructor(
    readonly service: string,
    readonly problems: string[],
  ) {
    super(`invalid ${service} configuration:\n  ${problems.join("\n  ")}`);
  }
}

/**
 * Parses `env` with `schema`.
 * @returns the parsed (defaulted, transformed) values.
 * @throws InvalidConfiguration naming every wrong variable ("VAR: what is expected"), e.g.
 *   "invalid gateway configuration:\n  NATS_URL: expected nats://host:port".
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv,
  service: string,
): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new InvalidConfiguration(
    service,
    parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`),
  );
}
