#!/usr/bin/env node
/**
 * The `gatehouse` command (`npm run gatehouse -- <command>`): runs the compiled CLI, dist/main.js,
 * which `npm run setup` (or `npm run build`) makes from src/ (apps/cli/build.mjs).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const main = new URL("../dist/main.js", import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    `gatehouse: the compiled CLI ${fileURLToPath(main)} is missing; run npm run setup in the repository root first (it installs what is missing and builds the CLI)\n`,
  );
  process.exit(1);
}
await import(main.href);
