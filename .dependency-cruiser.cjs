/**
 * The house's import rules, checked by dependency-cruiser (e2e/repo/architecture.test.ts runs it in
 * `npm test`; by hand: `npx depcruise --config .dependency-cruiser.cjs packages services sandbox-runner
 * web apps e2e bench deploy loadtests scripts examples`).
 *
 * Layers, lowest first: packages/* (libraries; packages/proto is the gRPC contract) ← services/*,
 * sandbox-runner, web ← apps/* (composition roots: the CLI and the in-process dev stack) ← e2e,
 * bench, deploy, loadtests, scripts, examples. A layer imports only from layers below it, no service imports
 * another service, a workspace reaches another only through its package name (never a relative
 * path), and no import circles.
 */
/** Single-folder workspaces (the others are packages/<name>, services/<name>, apps/<name>). */
const FLAT = "sandbox-runner|web|e2e|bench|deploy|loadtests|scripts|examples";
const ABOVE_LIBRARIES = "^(services|sandbox-runner|web|apps|e2e|bench|deploy|loadtests|scripts|examples)/";
const ABOVE_SERVICES = "^(apps|e2e|bench|deploy|loadtests|scripts|examples)/";
const ABOVE_APPS = "^(e2e|bench|deploy|loadtests|scripts|examples)/";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import circle: move the shared type or helper to the file (or package) it belongs to.",
      from: {},
      to: { circular: true },
    },
    {
      name: "library-imports-upward",
      severity: "error",
      comment:
        "A library (packages/*) imports only other libraries: never a service, an app, or a test/bench/deploy folder.",
      from: { path: "^packages/" },
      to: { path: ABOVE_LIBRARIES },
    },
    {
      name: "service-imports-another-service",
      severity: "error",
      comment:
        "A service never imports another service (they talk over gRPC); compose them in apps/dev-stack.",
      from: { path: "^services/([^/]+)/" },
      to: { path: "^(services/|sandbox-runner/|web/)", pathNot: "^services/$1/" },
    },
    {
      name: "runner-or-web-imports-a-service",
      severity: "error",
      comment: "The sandbox runner and the web app import only libraries.",
      from: { path: "^(sandbox-runner|web)/" },
      to: { path: "^(services/|sandbox-runner/|web/)", pathNot: "^$1/" },
    },
    {
      name: "service-imports-upward",
      severity: "error",
      comment:
        "Services, the sandbox runner and the web app never import apps, tests, benches or deploy code.",
      from: { path: "^(services|sandbox-runner|web)/" },
      to: { path: ABOVE_SERVICES },
    },
    {
      name: "app-imports-upward",
      severity: "error",
      comment: "Apps (the CLI, the dev stack) never import tests, benches or deploy code.",
      from: { path: "^apps/" },
      to: { path: ABOVE_APPS },
    },
    {
      name: "relative-import-into-another-workspace",
      severity: "error",
      comment:
        "Reach another workspace through its package name and exports (@gatehouse/<name>), never a relative path.",
      from: { path: "^(packages|services|apps)/([^/]+)/" },
      to: { dependencyTypes: ["local"], pathNot: "^$1/$2/" },
    },
    {
      name: "relative-import-out-of-a-flat-workspace",
      severity: "error",
      comment:
        "Reach another workspace through its package name and exports (@gatehouse/<name>), never a relative path.",
      from: { path: `^(${FLAT})/` },
      to: { dependencyTypes: ["local"], pathNot: "^$1/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist|test-output|\\.turbo)/|(^|/)src/gen/" },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    preserveSymlinks: false,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
      extensions: [".ts", ".tsx", ".mts", ".js", ".mjs", ".cjs", ".json"],
    },
  },
};
