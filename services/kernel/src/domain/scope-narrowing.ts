/**
 * Accepting a connection request may only narrow what the agent asked for, never widen it. The
 * rule is generic over the scope fragment's `key=value` pairs (MCP's `#tool=`/`#server=`, git's
 * `#branch=`/`#path=`): when the request has a fragment, the accepted URL's fragment keeps every
 * key of the request, each with values among the requested ones; for `path` a deeper path under a
 * requested one is narrower too. Keys the request lacks may be added (another constraint). A
 * request without fragment asked for everything, so any fragment (or none) is accepted.
 * One key may stand in for a wider one: PostgreSQL's `#table=<schema>.<table>` is narrower than
 * `#schema=<schema>` when every table is in a requested schema.
 */
import { InvalidArgument } from "./errors.ts";

/** Fragment keys whose values are path prefixes: a value under a requested one is narrower. */
const PATH_KEYS = new Set(["path"]);

/**
 * Keys whose values may be replaced by values of a narrower key: `schema` → `table`, a table
 * `<schema>.<table>` being within the schema named before its dot (identifiers have no dots).
 */
const NARROWER_KEYS: Record<string, { key: string; within: (value: string, requested: string) => boolean }> =
  {
    schema: {
      key: "table",
      within: (table, schema) => table.includes(".") && table.slice(0, table.indexOf(".")) === schema,
    },
  };

/** The fragment's pairs as key → values (percent-decoded, in order); `undefined` without "#". */
export function fragmentPairs(url: string): Map<string, string[]> | undefined {
  const i = url.indexOf("#");
  if (i < 0) return undefined;
  const pairs = new Map<string, string[]>();
  for (const part of url.slice(i + 1).split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const key = decoded(eq < 0 ? part : part.slice(0, eq));
    const value = decoded(eq < 0 ? "" : part.slice(eq + 1));
    pairs.set(key, [...(pairs.get(key) ?? []), value]);
  }
  return pairs;
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function withinPath(value: string, requested: string): boolean {
  const strip = (p: string) => p.replace(/\/+$/, "");
  const v = strip(value);
  const r = strip(requested);
  return r === "" || v === r || v.startsWith(`${r}/`);
}

function permitted(key: string, value: string, requested: readonly string[]): boolean {
  return requested.some((r) => r === value || (PATH_KEYS.has(key) && withinPath(value, r)));
}

const shown = (values: readonly string[]) => values.map((v) => `"${v}"`).join(", ");

/**
 * Checks that `acceptedUrl` grants no more than `requestedUrl` (both normalized by the
 * gatekeeper; the part before "#" is checked elsewhere).
 * @throws InvalidArgument naming the parameter that would widen the grant, and that a person who
 *   means to grant more uses `gatehouse connect`.
 */
export function checkNarrowsRequest(requestedUrl: string, acceptedUrl: string): void {
  const requested = fragmentPairs(requestedUrl);
  if (!requested || requested.size === 0) return;
  const accepted = fragmentPairs(acceptedUrl) ?? new Map<string, string[]>();
  const more =
    "; accepting may only narrow the request — to grant more, connect the resource with `gatehouse connect`";
  for (const [key, values] of requested) {
    const got = accepted.get(key);
    const narrower = NARROWER_KEYS[key];
    const byNarrower = narrower ? accepted.get(narrower.key) : undefined;
    if (!got && narrower && byNarrower) {
      const outside = byNarrower.filter((v) => !values.some((r) => narrower.within(v, r)));
      if (outside.length > 0) {
        throw new InvalidArgument(
          `the accepted url's scope parameter "${narrower.key}" has ${shown(outside)}, not within the requested ${key}=${shown(values)}${more}`,
        );
      }
      continue;
    }
    if (!got) {
      throw new InvalidArgument(
        `the accepted url drops the request's scope parameter "${key}" (requested ${key}=${shown(values)}), which would widen it${more}`,
      );
    }
    const extra = got.filter((v) => !permitted(key, v, values));
    if (extra.length > 0) {
      throw new InvalidArgument(
        `the accepted url's scope parameter "${key}" has ${shown(extra)}, not among the requested ${shown(values)}${PATH_KEYS.has(key) ? " (or under one of them)" : ""}${more}`,
      );
    }
  }
}
