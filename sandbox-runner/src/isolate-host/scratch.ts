import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

/**
 * Empties the scratch directory (a tmpfs in the sandbox): removes every entry, recursively. Called
 * before each execution so nothing written during one execution is there for the next. A missing
 * directory is left alone; any other failure is thrown (the host then exits: a sandbox that cannot
 * wipe its scratch must not take another execution).
 */
export function wipeScratch(dir: string): void {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  for (const entry of entries) rmSync(join(dir, entry), { recursive: true, force: true });
}
