#!/usr/bin/env node
/**
 * Whether `node_modules` already holds exactly what `package-lock.json` asks for, so `setup.sh` may
 * skip `npm ci` (which deletes node_modules and rebuilds the native modules: minutes).
 *
 * It compares the lockfile with npm's own record of what it installed, the hidden lockfile
 * `node_modules/.package-lock.json` (written by `npm ci` / `npm install` when they finish): every
 * installed package of the lockfile (a `node_modules/...` entry, workspaces' nested ones included)
 * must be recorded there with the same version, resolved URL, integrity and link flag, and its
 * folder must still hold a package.json; a package npm left out must be optional (another platform's
 * binary); nothing may be installed that the lockfile does not list.
 *
 * Plain JavaScript with no dependencies: it runs before anything is installed.
 *
 * Usage: `node scripts/npm-installed.mjs [repo-root]` (default: the parent of this script's folder).
 * Exit 0 when current; exit 1 printing one line that says what differs (the first difference found).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(process.argv[2] ?? join(import.meta.dirname, ".."));

/** Reads a lockfile's `packages` map, or undefined when the file is missing or not a lockfile. */
function packagesOf(file) {
  try {
    const lock = JSON.parse(readFileSync(file, "utf8"));
    return lock && typeof lock.packages === "object" ? lock.packages : undefined;
  } catch {
    return undefined;
  }
}

/** The first difference between the lockfile and what is installed, or undefined when there is none. */
function difference() {
  const wanted = packagesOf(join(root, "package-lock.json"));
  if (!wanted) return "package-lock.json is missing or unreadable";
  const installed = packagesOf(join(root, "node_modules/.package-lock.json"));
  if (!installed)
    return "node_modules/.package-lock.json is missing (nothing installed yet, or an install stopped)";
  const isInstall = (key) => key.startsWith("node_modules/") || key.includes("/node_modules/");
  for (const [key, want] of Object.entries(wanted)) {
    if (!isInstall(key)) continue;
    const have = installed[key];
    if (!have) {
      if (want.optional === true) continue;
      return `${key} is not installed`;
    }
    for (const field of ["version", "resolved", "integrity", "link"]) {
      if (want[field] !== have[field]) {
        return `${key}: ${field} is ${JSON.stringify(have[field])}, the lockfile says ${JSON.stringify(want[field])}`;
      }
    }
    if (!want.link && !existsSync(join(root, key, "package.json"))) return `${key} was removed from disk`;
  }
  for (const key of Object.keys(installed)) {
    if (isInstall(key) && !wanted[key]) return `${key} is installed but not in package-lock.json`;
  }
  return undefined;
}

const diff = difference();
if (diff) {
  console.log(diff);
  process.exit(1);
}
