/**
 * Scope fragments of resource URLs, parsed FAIL CLOSED (docs/architecture.md "The approval contract"):
 * `#tool=a&tool=b` permits exactly tools a and b; `#tool=` permits nothing; `#server=x` pins the
 * resource to registered server x. No fragment at all permits every tool.
 *
 * Anything else is an error naming the offending fragment part: an unknown key, an empty pair
 * (`a&&b`, trailing `&`), a pair without `=`, a duplicate tool or a second `server=`, a value that
 * does not percent-decode, or an empty fragment (`url#`).
 */
import { MalformedScopeFragment } from "./errors.ts";

/** Parsed scope. `tools === null` means "all tools" (no fragment); an empty set permits nothing. */
export interface Scope {
  tools: ReadonlySet<string> | null;
  server: string | null;
}

/** The scope of a URL without fragment: every tool, no server pin. */
export const ALL_TOOLS: Scope = { tools: null, server: null };

function decodePart(raw: string, part: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new MalformedScopeFragment(
      `scope fragment part "${part}" is not valid percent-encoding; encode reserved characters as %XX`,
    );
  }
}

/**
 * Parses the text after `#` (without the `#`); `undefined` means the URL had no `#`.
 * @throws MalformedScopeFragment naming the fragment part at fault.
 */
export function parseScopeFragment(fragment: string | undefined): Scope {
  if (fragment === undefined) return ALL_TOOLS;
  if (fragment === "") {
    throw new MalformedScopeFragment(
      'scope fragment is empty ("#" with nothing after it); remove the "#" to allow all tools, or write #tool=<name>',
    );
  }
  let tools: Set<string> | null = null;
  let server: string | null = null;
  for (const part of fragment.split("&")) {
    if (part === "") {
      throw new MalformedScopeFragment(
        `scope fragment "${fragment}" has an empty part (doubled or trailing "&"); write key=value pairs joined by single "&"`,
      );
    }
    const eq = part.indexOf("=");
    if (eq < 0) {
      throw new MalformedScopeFragment(
        `scope fragment part "${part}" is not a key=value pair; use tool=<name> or server=<name>`,
      );
    }
    const key = decodePart(part.slice(0, eq), part);
    const value = decodePart(part.slice(eq + 1), part);
    if (value.includes("=")) {
      throw new MalformedScopeFragment(
        `scope fragment part "${part}" has more than one "="; encode "=" as %3D`,
      );
    }
    if (key === "tool") {
      tools ??= new Set();
      if (value === "") continue; // `tool=` permits nothing by itself
      if (tools.has(value)) {
        throw new MalformedScopeFragment(
          `scope fragment part "${part}" repeats tool "${value}"; list each tool once`,
        );
      }
      tools.add(value);
    } else if (key === "server") {
      if (value === "") {
        throw new MalformedScopeFragment(`scope fragment part "${part}" has an empty server name`);
      }
      if (server !== null) {
        throw new MalformedScopeFragment(
          `scope fragment part "${part}" is a second server=; give server= once`,
        );
      }
      server = value;
    } else {
      throw new MalformedScopeFragment(
        `scope fragment part "${part}" uses unknown key "${key}"; only tool=<name> and server=<name> are allowed`,
      );
    }
  }
  return { tools, server };
}

/**
 * Canonical fragment text for a scope: `server=` first, then tools sorted; `""` for all tools.
 * Round-trips through `parseScopeFragment`.
 */
export function formatScopeFragment(scope: Scope): string {
  const parts: string[] = [];
  if (scope.server !== null) parts.push(`server=${encodeURIComponent(scope.server)}`);
  if (scope.tools !== null) {
    const sorted = [...scope.tools].sort();
    if (sorted.length === 0) parts.push("tool=");
    for (const t of sorted) parts.push(`tool=${encodeURIComponent(t)}`);
  }
  return parts.join("&");
}

/** True when `tool` is permitted by `scope`. */
export function scopePermits(scope: Scope, tool: string): boolean {
  return scope.tools === null || scope.tools.has(tool);
}
