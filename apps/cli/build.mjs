/**
 * Compiles the CLI to JavaScript under apps/cli/dist/: main.js bundles src/main.ts with what it
 * imports — the workspace packages (they export TypeScript sources) and the npm packages — so
 * `gatehouse` starts by reading one file instead of compiling TypeScript and resolving hundreds of
 * modules. Code only one command needs (the MCP server of `gatehouse mcp`) is imported dynamically
 * and split into its own file under dist/chunks/, read only when that command runs.
 *
 * Left out of the bundle, resolved from node_modules at run time: native modules (better-sqlite3, @kurrent/* (the KurrentDB client's native bridge),
 * isolated-vm), libpg-query (PostgreSQL's parser as WebAssembly: it reads libpg-query.wasm from its own
 * directory, which a bundle does not have), Temporal (@temporalio/*), tsx, and `gatehouse dev`'s whole stack: @gatehouse/dev-stack and
 * the packages the dev command imports dynamically are loaded from source through tsx
 * (src/load-dev-stack.ts), so the services run as they do from source.
 * Run by `npm run build` (turbo); by hand: `node build.mjs` in apps/cli.
 */
import { rmSync } from "node:fs";
import { build } from "esbuild";

/** npm packages that stay external: native or WebAssembly, heavy and only used by `gatehouse dev`, or tsx itself. */
const EXTERNAL =
  /^(better-sqlite3|isolated-vm|libpg-query(\/|$)|@kurrent\/|@temporalio\/|tsx(\/|$)|pino(\/|$)|fastify|@fastify\/)/;

const externals = {
  name: "gatehouse-externals",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      // Dynamic imports of workspace packages are `gatehouse dev`'s: loaded from source through tsx.
      if (args.path.startsWith("@gatehouse/") && args.kind === "dynamic-import") {
        return { path: args.path, external: true };
      }
      return EXTERNAL.test(args.path) ? { path: args.path, external: true } : undefined;
    });
  },
};

// Chunk names carry content hashes: start from an empty dist/ so old chunks do not pile up.
rmSync("dist", { recursive: true, force: true });

const result = await build({
  entryPoints: ["src/main.ts"],
  outdir: "dist",
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
  // Bundled CommonJS packages (grpc-js, commander, …) call require() for Node's modules.
  banner: {
    js: 'import { createRequire as __gatehouseCreateRequire } from "node:module"; const require = __gatehouseCreateRequire(import.meta.url);',
  },
  plugins: [externals],
  metafile: !!process.env.METAFILE,
});
if (process.env.METAFILE)
  (await import("node:fs")).writeFileSync(process.env.METAFILE, JSON.stringify(result.metafile));
