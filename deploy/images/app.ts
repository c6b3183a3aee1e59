/**
 * The app layer of each image, as a directory that becomes `/app`: every entry bundled into one file
 * with esbuild (the workspace packages export TypeScript sources; npm packages are bundled too), and
 * the packages a bundle leaves external — native modules (better-sqlite3, isolated-vm, @kurrent/bridge of the KurrentDB client),
 * libpg-query (PostgreSQL's parser as WebAssembly, read from its own directory: gatekeeper-postgres), Temporal (its
 * core bridge is native and its worker loads webpack) and modules loaded through createRequire — copied
 * in as production node_modules with their dependency closure.
 *
 * services → /app/gatehouse-service.mjs (the `gatehouse-service <component>` dispatcher),
 *            /app/<component>/main.js, /app/worker/workflow-bundle.js (+ -traced.js), /app/worker/agent-workflow-bundle.js, /app/web (web/dist),
 *            /app/mcp/memory/server.mjs (the example memory MCP server),
 *            /app/node_modules
 * sandbox  → /app/runner/main.js, /app/dist/isolate-host.cjs (where the runner looks for it:
 *            ../dist from its own file), /app/node_modules (isolated-vm)
 */

import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { join } from "node:path";
import { build, type Metafile } from "esbuild";
import { copyClosure, dependencyClosure } from "./node-modules.ts";
import { REPO_ROOT, SERVICE_COMPONENTS } from "./spec.ts";

/** npm packages left out of every bundle (resolved from /app/node_modules at run time). */
const EXTERNAL = /^(better-sqlite3|isolated-vm|libpg-query(\/|$)|@temporalio\/|@kurrent\/bridge)/;

/**
 * Packages loaded at run time in a way esbuild cannot follow (createRequire(import.meta.url)(name) in
 * packages/event-store/src/hash.ts), copied in whole.
 */
const RUNTIME_REQUIRED = ["canonicalize"];

/**
 * Paths of the copied node_modules that nothing loads at run time on linux-x64 glibc: other platforms'
 * prebuilt binaries, the native modules' C/C++/Rust sources and build leftovers, type declarations and
 * source maps, Temporal's TypeScript sources (its lib/ is what runs).
 */
function notNeededAtRunTime(rel: string): boolean {
  return (
    /@temporalio\/core-bridge\/releases\/(?!x86_64-unknown-linux-gnu$)[^/]+$/.test(rel) ||
    /@temporalio\/core-bridge\/(sdk-core|src|bridge-macros|ts|scripts|Cargo\.(toml|lock))$/.test(rel) ||
    /@temporalio\/[^/]+\/src$/.test(rel) ||
    /better-sqlite3\/(deps|src)$/.test(rel) ||
    /better-sqlite3\/build\/(?!Release$)[^/]+$/.test(rel) ||
    /better-sqlite3\/build\/Release\/(?!better_sqlite3\.node$)[^/]+$/.test(rel) ||
    /isolated-vm\/(src|vendor|binding\.gyp)$/.test(rel) ||
    /\.(d\.ts|d\.mts|d\.cts|map)$/.test(rel)
  );
}

/** Package name of a bare import ("@temporalio/client/lib/x" → "@temporalio/client"), or null for builtins. */
function packageName(spec: string): string | null {
  if (spec.startsWith("node:") || builtinModules.includes(spec.split("/")[0]!)) return null;
  const parts = spec.split("/");
  return spec.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** Bare packages the outputs of `meta` import but do not contain. */
function externalPackages(meta: Metafile): string[] {
  const names = new Set<string>();
  for (const output of Object.values(meta.outputs)) {
    for (const imp of output.imports) {
      const name = imp.external ? packageName(imp.path) : null;
      if (name) names.add(name);
    }
  }
  return [...names].sort();
}

/** Bundles `entry` (relative to the repository) into `outfile` as one ESM file; returns its external packages. */
async function bundle(entry: string, outfile: string): Promise<string[]> {
  const result = await build({
    entryPoints: [join(REPO_ROOT, entry)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    metafile: true,
    legalComments: "none",
    // Bundled CommonJS packages (grpc-js, pino, …) call require() for Node's modules.
    banner: {
      js: 'import { createRequire as __gatehouseCreateRequire } from "node:module"; const require = __gatehouseCreateRequire(import.meta.url);',
    },
    plugins: [
      {
        name: "gatehouse-image-externals",
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            EXTERNAL.test(args.path) ? { path: args.path, external: true } : undefined,
          );
        },
      },
    ],
  });
  return externalPackages(result.metafile);
}

/**
 * Copies the run-time closure of `names` (resolved from the workspace package `workspace`, e.g.
 * "services/worker") to `<app>/node_modules`, keeping the nesting Node resolves by.
 */
function installModules(names: string[], workspace: string, app: string): void {
  // A bundle also leaves out what its packages require only inside try/catch and is not installed
  // (e.g. json-schema-to-typescript's optional cli-color): those stay absent, as they are here.
  const wanted = names.filter(
    (n) => EXTERNAL.test(n) || RUNTIME_REQUIRED.includes(n) || existsSync(join(REPO_ROOT, "node_modules", n)),
  );
  const closure = dependencyClosure(wanted, join(REPO_ROOT, workspace), REPO_ROOT);
  const outside = closure.filter((rel) => !rel.startsWith("node_modules/"));
  if (outside.length > 0) {
    throw new Error(
      `${outside.join(", ")}: installed inside a workspace, not hoisted to node_modules/; the image layout expects hoisted packages (run npm ci)`,
    );
  }
  copyClosure(closure, REPO_ROOT, app, notNeededAtRunTime);
}

/** The dispatcher /app/gatehouse-service.mjs: `gatehouse-service <component>` runs /app/<component>/main.js. */
function dispatcher(): string {
  const list = SERVICE_COMPONENTS.join(", ");
  return `// gatehouse-service <component>: starts one Gatehouse service (configured by environment variables,
// see deploy/images/README.md in the Gatehouse repository).
const components = ${JSON.stringify(SERVICE_COMPONENTS)};
const [component, ...rest] = process.argv.slice(2);
if (!component || component === "--help" || component === "-h") {
  console.log("usage: gatehouse-service <component>\\ncomponents: ${list}");
  process.exit(component ? 0 : 2);
}
if (!components.includes(component)) {
  console.error(\`gatehouse-service: unknown component "\${component}"; expected one of: ${list}\`);
  process.exit(2);
}
if (rest.length > 0) {
  console.error(\`gatehouse-service \${component}: takes no arguments (configure it with environment variables), got: \${rest.join(" ")}\`);
  process.exit(2);
}
process.argv.splice(2, 1);
await import(\`./\${component}/main.js\`);
`;
}

/**
 * Writes the services image's /app into `app` (emptied first).
 * Needs `npm run build` to have run (web/dist).
 * @throws Error when web/dist is missing, a bundle fails, or an external package is not installed.
 */
export async function buildServicesApp(app: string): Promise<void> {
  const webDist = join(REPO_ROOT, "web", "dist");
  if (!existsSync(join(webDist, "index.html"))) {
    throw new Error(`${webDist}/index.html is missing: run npm run build first (it builds the web app)`);
  }
  rmSync(app, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  const externals = await Promise.all(
    SERVICE_COMPONENTS.map(async (c) => {
      const names = await bundle(`services/${c}/src/main.ts`, join(app, c, "main.js"));
      return { c, names };
    }),
  );
  const names = new Set<string>(RUNTIME_REQUIRED);
  for (const e of externals) for (const n of e.names) names.add(n);
  installModules([...names].sort(), "services/worker", app);
  // The worker's workflow code, bundled once here instead of at each start (needs webpack and sources).
  const { bundleAgentWorkflows, bundleLifecycleWorkflows } = (await import(
    "@gatehouse/worker"
  )) as typeof import("@gatehouse/worker");
  writeFileSync(join(app, "worker", "workflow-bundle.js"), (await bundleLifecycleWorkflows()).code);
  // …and with tracing's workflow interceptors, used when the worker traces (docs/observability.md).
  writeFileSync(
    join(app, "worker", "workflow-bundle-traced.js"),
    (await bundleLifecycleWorkflows({ traced: true })).code,
  );
  // …and the built-in agent's turn workflow (WORKER_AGENT_WORKFLOW_BUNDLE): the image has no sources to bundle from.
  writeFileSync(join(app, "worker", "agent-workflow-bundle.js"), (await bundleAgentWorkflows()).code);
  cpSync(webDist, join(app, "web"), { recursive: true });
  await bundleMemoryServer(join(app, "mcp", "memory", "server.mjs"));
  writeFileSync(join(app, "package.json"), `${JSON.stringify({ private: true, type: "module" }, null, 2)}\n`);
  writeFileSync(join(app, "gatehouse-service.mjs"), dispatcher());
}

/**
 * The example MCP server the docs and the chart's evaluation profile connect: the reference memory
 * server (@modelcontextprotocol/server-memory, stdio), bundled into one file at `outfile`
 * (/app/mcp/memory/server.mjs: gatekeeper-mcp runs it as `node /app/mcp/memory/server.mjs`, keeping its
 * graph in MEMORY_FILE_PATH), so a trial needs no egress to the npm registry.
 * @throws Error when the package is not installed or the bundle fails.
 */
async function bundleMemoryServer(outfile: string): Promise<void> {
  const require = createRequire(join(REPO_ROOT, "services", "gatekeeper-mcp", "package.json"));
  await build({
    entryPoints: [require.resolve("@modelcontextprotocol/server-memory/dist/index.js")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    logLevel: "warning",
    legalComments: "none",
    banner: {
      js: 'import { createRequire as __gatehouseCreateRequire } from "node:module"; const require = __gatehouseCreateRequire(import.meta.url);',
    },
  });
}

/**
 * Writes the sandbox image's /app into `app` (emptied first).
 * @throws Error when a bundle fails or isolated-vm is not installed.
 */
export async function buildSandboxApp(app: string): Promise<void> {
  rmSync(app, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  const names = await bundle("sandbox-runner/src/main.ts", join(app, "runner", "main.js"));
  const { buildIsolateHost } = (await import(
    join(REPO_ROOT, "sandbox-runner/scripts/build-isolate-host.mjs")
  )) as {
    buildIsolateHost: () => Promise<string>;
  };
  const isolateHost = await buildIsolateHost();
  mkdirSync(join(app, "dist"), { recursive: true });
  cpSync(isolateHost, join(app, "dist", "isolate-host.cjs"));
  installModules([...new Set([...names, "isolated-vm"])].sort(), "sandbox-runner", app);
  writeFileSync(join(app, "package.json"), `${JSON.stringify({ private: true, type: "module" }, null, 2)}\n`);
}
