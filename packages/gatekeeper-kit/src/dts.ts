/**
 * `.d.ts` delivery helpers for any gatekeeper: an agent sees each binding as one TypeScript
 * `interface <BINDING>` with documented methods. Doc text often comes from the external system
 * (tool descriptions, repository names) and is UNTRUSTED: `sanitizeDocText` makes it unable to
 * close the comment, and names are turned into safe keys and identifiers.
 */

/** Longest doc text kept (characters); longer text ends with " …". */
export const MAX_DOC_CHARS = 2000;

/** Makes text safe inside a `/** ... *\/` comment: no `*\/` or `/*`, no control characters, bounded. */
export function sanitizeDocText(text: string): string {
  const cleaned = text
    .replace(/\*\//g, "*\u200b/")
    .replace(/\/\*/g, "/\u200b*")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters on purpose
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f\u2028\u2029]/g, " ");
  return cleaned.length > MAX_DOC_CHARS ? `${cleaned.slice(0, MAX_DOC_CHARS)} …` : cleaned;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A property key for `name`: the bare name when it is an identifier, else a JSON string literal. */
export function methodKey(name: string): string {
  return IDENT.test(name) ? name : JSON.stringify(name);
}

/**
 * An identifier derived from `name` (non-identifier characters become "_"), unique within `used`
 * (a suffix `_2`, `_3`, ... is added); the result is added to `used`.
 */
export function uniqueIdent(name: string, used: Set<string>): string {
  let base = name.replace(/[^A-Za-z0-9_]/g, "_");
  if (!/^[A-Za-z_]/.test(base)) base = `_${base}`;
  let candidate = base;
  for (let i = 2; used.has(candidate); i++) candidate = `${base}_${i}`;
  used.add(candidate);
  return candidate;
}

/** Prefixes every non-empty line of `text` with `prefix`. */
export function indentLines(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((l) => (l === "" ? l : prefix + l))
    .join("\n");
}

/**
 * A doc comment holding `lines` (each sanitized), indented by `indent`. Blank lines are kept.
 * Returns "" when `lines` is empty.
 */
export function docComment(lines: readonly string[], indent = ""): string {
  if (lines.length === 0) return "";
  const body = lines
    .flatMap((l) => sanitizeDocText(l).split("\n"))
    .map((l) => `${indent} * ${l}`.trimEnd())
    .join("\n");
  return `${indent}/**\n${body}\n${indent} */`;
}

/** One method of a binding interface. */
export interface DtsMethod {
  /** Method name as the agent calls it (any string; quoted when not an identifier). */
  name: string;
  /** Doc lines (untrusted text allowed: sanitized here). */
  doc: readonly string[];
  /** Parameter list and return type after the name, e.g. `(path: string): Promise<string>;`. Trusted. */
  signature: string;
}

/**
 * `interface <name> { ... }` with one documented member per method, in the given order.
 * `name` must be an identifier (a binding name such as "REPO").
 * @throws RangeError when `name` is not an identifier.
 */
export function assembleInterface(
  name: string,
  doc: readonly string[],
  methods: readonly DtsMethod[],
): string {
  if (!IDENT.test(name)) throw new RangeError(`interface name "${name}" must be a TypeScript identifier`);
  const members = methods.map((m) => {
    const comment = docComment(m.doc, "  ");
    return `${comment ? `${comment}\n` : ""}  ${methodKey(m.name)}${m.signature}`;
  });
  const head = docComment(doc);
  return `${head ? `${head}\n` : ""}interface ${name} {\n${members.join("\n")}\n}`;
}
