import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { assembleInterface, docComment, methodKey, sanitizeDocText, uniqueIdent } from "../src/dts.ts";

test("doc text cannot close the comment, carries no control characters and is bounded", () => {
  const s = sanitizeDocText("a */ declare const x: 1; /* b\u0007\r");
  assert.ok(!s.includes("*/"));
  assert.ok(!s.includes("/*"));
  assert.ok(!s.includes("\u0007") && !s.includes("\r"));
  assert.ok(sanitizeDocText("x".repeat(5000)).endsWith(" …"));
});

test("names become safe keys and unique identifiers", () => {
  assert.equal(methodKey("readFile"), "readFile");
  assert.equal(methodKey("get-sum"), '"get-sum"');
  const used = new Set<string>();
  assert.deepEqual(
    [uniqueIdent("get-sum", used), uniqueIdent("get_sum", used), uniqueIdent("1x", used)],
    ["get_sum", "get_sum_2", "_1x"],
  );
  assert.equal(docComment([]), "");
});

test("an assembled interface with hostile doc text compiles and declares only its methods", () => {
  const text = assembleInterface(
    "REPO",
    ["Repository */ declare const injected: number; /*"],
    [
      {
        name: "readFile",
        doc: ["Reads a file.", "", "Read: recorded."],
        signature: "(path: string): Promise<string>;",
      },
      { name: "list-files", doc: ["*/ evil"], signature: "(page?: number): Promise<string[]>;" },
    ],
  );
  assert.match(text, /^ {2}readFile\(path: string\): Promise<string>;$/m);
  assert.match(text, /^ {2}"list-files"\(page\?: number\): Promise<string\[\]>;$/m);
  const dir = mkdtempSync(join(tmpdir(), "gk-kit-dts-"));
  try {
    writeFileSync(join(dir, "repo.d.ts"), text);
    writeFileSync(
      join(dir, "use.ts"),
      'declare const r: REPO;\nconst s: Promise<string> = r.readFile("a");\nvoid s;\n// @ts-expect-error not declared\nvoid injected;\n',
    );
    // Only these two files and the ES library: no ambient @types from the monorepo's node_modules
    // (a sandbox snippet sees none either).
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { noEmit: true, strict: true, lib: ["es2022"], types: [] },
        files: ["repo.d.ts", "use.ts"],
      }),
    );
    const tsc = resolve(import.meta.dirname, "../../../node_modules/typescript/bin/tsc");
    execFileSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => assembleInterface("not valid", [], []), /must be a TypeScript identifier/);
});
