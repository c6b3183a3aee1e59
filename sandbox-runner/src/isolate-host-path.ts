import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SandboxUnavailableError } from "./errors.ts";

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Absolute path of the bundled isolate host (`npm run build` writes it). */
export const ISOLATE_HOST_PATH = join(packageRoot, "dist", "isolate-host.cjs");

/**
 * True when some file under `src/` (the bundle's sources, in a checkout) was modified after the
 * bundle was written, so a bundle left by an earlier build would run old code. False where there is
 * no `src/` (an image ships only the bundle).
 */
function bundleIsStale(): boolean {
  const src = join(packageRoot, "src");
  if (!existsSync(src)) return false;
  const built = statSync(ISOLATE_HOST_PATH).mtimeMs;
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && statSync(join(entry.parentPath, entry.name)).mtimeMs > built) return true;
  }
  return false;
}

/**
 * Returns ISOLATE_HOST_PATH, building it first when missing, older than its sources in `src/`, or
 * when `rebuild` is true (needs the esbuild dev dependency). A stale bundle that cannot be rebuilt
 * is used as it is, with a process warning.
 * @throws SandboxUnavailableError when it is missing and cannot be built.
 */
export async function ensureIsolateHost(rebuild = false): Promise<string> {
  if (!rebuild && existsSync(ISOLATE_HOST_PATH) && !bundleIsStale()) return ISOLATE_HOST_PATH;
  try {
    const script = join(packageRoot, "scripts", "build-isolate-host.mjs");
    const { buildIsolateHost } = (await import(script)) as { buildIsolateHost: () => Promise<string> };
    return await buildIsolateHost();
  } catch (error) {
    if (!rebuild && existsSync(ISOLATE_HOST_PATH)) {
      // Stale but present (e.g. an install without esbuild): run it, and say so.
      process.emitWarning(
        `the isolate host bundle ${ISOLATE_HOST_PATH} is older than its sources and could not be rebuilt (${(error as Error).message}); running it as it is — run \`npm run build -w @gatehouse/sandbox-runner\``,
      );
      return ISOLATE_HOST_PATH;
    }
    throw new SandboxUnavailableError(
      `the isolate host bundle ${ISOLATE_HOST_PATH} is missing and could not be built (${(error as Error).message}); run \`npm run build -w @gatehouse/sandbox-runner\``,
    );
  }
}
