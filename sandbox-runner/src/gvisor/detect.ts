import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** Absolute path of `runsc` on PATH (executable), or null when gVisor is not installed. */
export function findRunsc(pathEnv: string = process.env.PATH ?? ""): string | null {
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, "runsc");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
