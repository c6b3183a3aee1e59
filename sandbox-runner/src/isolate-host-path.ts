import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SandboxUnavailableError } from "./errors.ts";

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Absolute path of the bundled isolate host (`npm run build` writes it). */
export const ISOLATE_HOST_PATH = join(packageRoot, "dist", "isolate-host.cjs");

/**
 * Returns ISOLATE_HOST_PATH, building it first when missing or when `rebuild` is true
 * (needs the esbuild dev dependency).
 * @throws SandboxUnavailableError when it is missing and cannot be built.
 */
export async function ensureIsolateHost(rebuild = false): Promise<string> {
  if (!rebuild && existsSync(ISOLATE_HOST_PATH)) return ISOLATE_HOST_PATH;
  try {
    const script = join(packageRoot, "scripts", "build-isolate-host.mjs");
    const { buildIsolateHost } = (await import(script)) as { buildIsolateHost: () => Promise<string> };
    return await buildIsolateHost();
  } catch (error) {
    throw new SandboxUnavailableError(
      `the isolate host bundle ${ISOLATE_HOST_PATH} is missing and could not be built (${(error as Error).message}); run \`npm run build -w @gatehouse/sandbox-runner\``,
    );
  }
}
