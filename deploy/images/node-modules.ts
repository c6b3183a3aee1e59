/**
 * The production node_modules an image needs: the packages its bundles leave external (native modules,
 * Temporal) and everything they depend on at run time, copied from the checkout's installed
 * node_modules with the same nesting — so Node resolves them in the image exactly as it does here.
 */
import { cpSync, existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** What `dependencies` + installed `optionalDependencies` of a package.json name. */
function runtimeDependencies(packageDir: string): string[] {
  const pkg = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  return [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})];
}

/**
 * Directory of package `name` as Node would find it from `fromDir` (the nearest node_modules/<name> up
 * the tree, stopping at `root`), or null when it is not installed (an optional dependency for another
 * platform).
 */
function locate(name: string, fromDir: string, root: string): string | null {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dir === root || dirname(dir) === dir) return null;
  }
}

/**
 * Package directories (relative to `root`, e.g. "node_modules/@temporalio/worker") holding `names` and
 * their run-time dependency closure, resolved from `fromDir` (a workspace package of the checkout).
 * @throws Error naming a package of `names` that is not installed (run npm ci).
 */
export function dependencyClosure(names: readonly string[], fromDir: string, root: string): string[] {
  const found = new Set<string>();
  const queue: Array<[string, string, boolean]> = names.map((n) => [n, fromDir, true]);
  while (queue.length > 0) {
    const [name, from, required] = queue.shift()!;
    const dir = locate(name, from, root);
    if (!dir) {
      if (required) throw new Error(`${name} is not installed under ${root}: run npm ci first`);
      continue;
    }
    const rel = relative(root, dir);
    if (found.has(rel)) continue;
    found.add(rel);
    for (const dep of runtimeDependencies(dir)) queue.push([dep, dir, false]);
  }
  return [...found].sort();
}

/**
 * Copies each package directory of `closure` (relative to `root`) to the same relative path under
 * `target`, leaving out what `skip` matches (a path relative to `root`, e.g. another platform's
 * prebuilt binaries). Nested node_modules of a package are copied only when they are in the closure.
 */
export function copyClosure(
  closure: readonly string[],
  root: string,
  target: string,
  skip: (relPath: string) => boolean = () => false,
): void {
  const inClosure = new Set(closure);
  for (const rel of closure) {
    cpSync(join(root, rel), join(target, rel), {
      recursive: true,
      dereference: false,
      filter: (src) => {
        const r = relative(root, src);
        if (r === rel) return true;
        if (skip(r)) return false;
        // A nested node_modules/<pkg> of this package: copied as its own closure entry, if needed.
        const nested = /(?:^|\/)node_modules\/(@[^/]+\/[^/]+|[^@/][^/]*)$/.exec(r);
        return !nested || inClosure.has(r);
      },
    });
  }
}
