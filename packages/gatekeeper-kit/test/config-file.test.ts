/** readYamlConfigFile: the file's path, the system code and the setting in every error; `{}` for an empty file. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { readYamlConfigFile } from "../src/index.ts";

class ConfigBad extends Error {}
const dir = mkdtempSync(join(tmpdir(), "kit-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const opts = { what: "demo registry file", setting: "DEMO_REGISTRY", fail: (m: string) => new ConfigBad(m) };

test("a missing file is reported with its path, ENOENT and the setting to check", () => {
  const path = join(dir, "missing.yaml");
  assert.throws(
    () => readYamlConfigFile(path, opts),
    (e: unknown) =>
      e instanceof ConfigBad &&
      e.message === `cannot read demo registry file ${path} (ENOENT: no such file); check DEMO_REGISTRY`,
  );
});

test("malformed YAML is reported with the parser's line and column", () => {
  const path = join(dir, "bad.yaml");
  writeFileSync(path, "servers:\n  a: [1, 2\n");
  assert.throws(
    () => readYamlConfigFile(path, opts),
    (e: unknown) =>
      e instanceof ConfigBad && /bad\.yaml is not valid YAML: .*line \d+, column \d+/s.test(e.message),
  );
});

test("an empty file parses to an empty document and a valid one to its value", () => {
  const empty = join(dir, "empty.yaml");
  writeFileSync(empty, "");
  assert.deepEqual(readYamlConfigFile(empty, opts), {});
  const ok = join(dir, "ok.yaml");
  writeFileSync(ok, "servers:\n  a: { port: 5432 }\n");
  assert.deepEqual(readYamlConfigFile(ok, opts), { servers: { a: { port: 5432 } } });
});
