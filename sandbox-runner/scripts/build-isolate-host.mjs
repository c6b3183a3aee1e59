// Builds dist/isolate-host.cjs: the process that owns one isolated-vm isolate per execution.
// capnweb is bundled separately as an IIFE and embedded as a string (module "virtual:capnweb-iife"),
// because it is evaluated INSIDE the isolate, not in the isolate host's own Node realm.
// isolated-vm stays external: it is a native module, resolved at run time from node_modules
// (plain mode) or from the copy placed next to the bundle (gVisor mode).
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Bundles capnweb as a browser IIFE defining one global `capnweb`; returns its source text. */
async function buildCapnwebIife() {
  const out = await esbuild.build({
    stdin: { contents: 'export * from "capnweb";', resolveDir: root, loader: "js" },
    bundle: true,
    format: "iife",
    globalName: "capnweb",
    platform: "browser",
    target: "es2022",
    write: false,
    minify: false,
    legalComments: "inline",
  });
  return out.outputFiles[0].text;
}

export async function buildIsolateHost() {
  const capnwebSource = await buildCapnwebIife();
  await mkdir(join(root, "dist"), { recursive: true });
  await esbuild.build({
    entryPoints: [join(root, "src/isolate-host/main.ts")],
    outfile: join(root, "dist/isolate-host.cjs"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["isolated-vm"],
    legalComments: "inline",
    plugins: [
      {
        name: "capnweb-iife",
        setup(build) {
          build.onResolve({ filter: /^virtual:capnweb-iife$/ }, (args) => ({
            path: args.path,
            namespace: "capnweb-iife",
          }));
          build.onLoad({ filter: /.*/, namespace: "capnweb-iife" }, () => ({
            contents: `export default ${JSON.stringify(capnwebSource)};`,
            loader: "js",
          }));
        },
      },
    ],
  });
  return join(root, "dist/isolate-host.cjs");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const path = await buildIsolateHost();
  console.log(`built ${path}`);
}
