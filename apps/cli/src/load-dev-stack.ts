/**
 * Loads @gatehouse/dev-stack (apps/dev-stack), which imports every service, for `gatehouse dev`
 * only. The compiled CLI (dist/main.js, see build.mjs) leaves it out of the bundle: it is imported
 * from source after registering tsx's ESM loader, so the services and the Temporal worker (which
 * bundles its workflow sources from their paths) run as they do from source. The other commands
 * never load tsx.
 */
export async function loadDevStack(): Promise<typeof import("@gatehouse/dev-stack")> {
  if (!import.meta.url.endsWith(".ts")) {
    const { register } = await import("tsx/esm/api");
    register();
  }
  return import("@gatehouse/dev-stack");
}
