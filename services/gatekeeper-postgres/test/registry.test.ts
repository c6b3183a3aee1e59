import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  createRegistry,
  loadRegistryFile,
  lookupServer,
  type RegistryInput,
  RegistryInvalid,
  readPassword,
} from "../src/registry.ts";

const dir = mkdtempSync(join(tmpdir(), "pg-registry-"));
const YAML = `
servers:
  crm:
    host: db.internal
    databases: [sales]
    readRole: { user: gh_read, passwordFile: ${dir}/read-pw }
    writeRole: { user: gh_write, passwordEnv: CRM_WRITE_PW }
    restrictedColumns: [app.customers.email]
    statementTimeoutMs: 2000
`;

test("a YAML registry loads with defaults; lookups by name and database", async () => {
  writeFileSync(join(dir, "reg.yaml"), YAML);
  const reg = await loadRegistryFile(join(dir, "reg.yaml"));
  const crm = reg.servers.crm!;
  assert.equal(crm.port, 5432);
  assert.equal(crm.allowDdl, false);
  assert.equal(crm.statementTimeoutMs, 2000);
  assert.deepEqual(crm.restrictedColumns, ["app.customers.email"]);
  assert.equal(lookupServer(reg, "crm", "sales"), crm);
  assert.equal(lookupServer(reg, "crm", "other"), undefined);
  assert.equal(lookupServer(reg, "toString", "sales"), undefined);
});

test("passwords come from a file or an environment variable, and errors never show them", async () => {
  writeFileSync(join(dir, "read-pw"), "s3cret\n");
  assert.equal(await readPassword({ user: "r", passwordFile: join(dir, "read-pw") }), "s3cret");
  assert.equal(await readPassword({ user: "w", passwordEnv: "PW" }, { PW: "x" }), "x");
  await assert.rejects(
    readPassword({ user: "w", passwordEnv: "PW" }, {}),
    /environment variable PW .* is not set/,
  );
  await assert.rejects(
    readPassword({ user: "r", passwordFile: join(dir, "nope") }),
    /cannot read the password file .*nope of role r \(ENOENT\)/,
  );
});

function invalid(input: unknown, message: RegExp): void {
  assert.throws(
    () => createRegistry(input as RegistryInput),
    (e: unknown) => e instanceof RegistryInvalid && message.test(e.message),
  );
}
const role = { user: "u", passwordEnv: "P" };
const ok = { host: "h", databases: ["d"], readRole: role, writeRole: role };

test("validation errors name the entry and the field", () => {
  invalid({ servers: { crm: { ...ok, host: "" } } }, /servers\.crm\.host: host must name the server/);
  invalid(
    { servers: { crm: { ...ok, databases: [] } } },
    /servers\.crm\.databases: list at least one database/,
  );
  invalid({ servers: { crm: { ...ok, port: 70000 } } }, /servers\.crm\.port/);
  invalid(
    { servers: { crm: { ...ok, restrictedColumns: ["customers.email"] } } },
    /servers\.crm\.restrictedColumns\.0: must be <schema>\.<table>\.<column>/,
  );
  invalid(
    { servers: { crm: { ...ok, readRole: { user: "u" } } } },
    /servers\.crm\.readRole: give exactly one of passwordFile/,
  );
  invalid(
    { servers: { crm: { ...ok, writeRole: { user: "u", passwordFile: "rel/path" } } } },
    /servers\.crm\.writeRole\.passwordFile: passwordFile must be an absolute path/,
  );
  invalid({ servers: { "Bad Name": ok } }, /servers\.Bad Name/);
  invalid({ servers: { crm: { ...ok, allowDDL: true } } }, /servers\.crm: .*allowDDL/);
});

test("an inline password is refused without echoing it", () => {
  assert.throws(
    () =>
      createRegistry({
        servers: { crm: { ...ok, readRole: { user: "u", password: "hunter2" } } },
      } as RegistryInput),
    (e: unknown) =>
      e instanceof RegistryInvalid &&
      /servers\.crm\.readRole: inline "password" is not allowed; use passwordFile or passwordEnv/.test(
        e.message,
      ) &&
      !e.message.includes("hunter2"),
  );
});

test("an unreadable or non-YAML file is reported with its path", async () => {
  await assert.rejects(
    loadRegistryFile(join(dir, "missing.yaml")),
    /cannot read postgres registry file .*missing\.yaml \(ENOENT: no such file\)$/,
  );
  writeFileSync(join(dir, "bad.yaml"), "servers: [unclosed");
  await assert.rejects(loadRegistryFile(join(dir, "bad.yaml")), /is not valid YAML/);
});
