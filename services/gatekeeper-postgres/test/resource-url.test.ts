import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidResourceUrl } from "../src/errors.ts";
import { parsePostgresResource } from "../src/resource-url.ts";

function bad(url: string, message: RegExp): void {
  assert.throws(
    () => parsePostgresResource(url),
    (e: unknown) => {
      assert.ok(e instanceof InvalidResourceUrl, `not InvalidResourceUrl: ${e}`);
      assert.match(e.message, message);
      assert.match(e.message, /the accepted form is postgres:\/\/<registered-name>\/<database>/);
      return true;
    },
  );
}

test("a database, a schema and a set of tables", () => {
  assert.deepEqual(parsePostgresResource("postgres://crm/sales"), {
    name: "crm",
    database: "sales",
    scope: { kind: "database" },
    normalizedUrl: "postgres://crm/sales",
  });
  assert.deepEqual(parsePostgresResource("postgres://crm/sales#schema=app").scope, {
    kind: "schema",
    schema: "app",
  });
  const r = parsePostgresResource("postgres://crm-eu/sales#table=app.orders&table=public.t_1");
  assert.deepEqual(r.scope, {
    kind: "tables",
    tables: [
      { schema: "app", table: "orders" },
      { schema: "public", table: "t_1" },
    ],
  });
  assert.equal(r.normalizedUrl, "postgres://crm-eu/sales#table=app.orders&table=public.t_1");
});

test("the URL never carries a host's user, password, port or query", () => {
  bad("postgres://admin:secret@crm/sales", /must not carry a user or password/);
  bad("postgres://admin@crm/sales", /must not carry a user or password/);
  bad("postgres://crm:5432/sales", /must not carry a port/);
  bad("postgres://crm/sales?sslmode=disable", /must not carry a query/);
  bad("postgres://db.example.com/sales", /"db.example.com" is not a registered server name/);
});

test("scheme, path and identifiers", () => {
  bad("postgresql://crm/sales", /scheme must be "postgres:\/\/" \(got "postgresql:"\)/);
  bad("postgres://crm", /must name a database/);
  bad("postgres://crm/sales/extra", /exactly one database name/);
  bad("postgres://crm/Sales", /database "Sales" is not a lower-case PostgreSQL identifier/);
  bad("postgres://crm/sales#schema=App", /schema "App" is not a lower-case/);
  bad("postgres://crm/sales#table=orders", /must name <schema>\.<table>/);
  bad("postgres://crm/sales#table=app.a.b", /table name "a.b" is not a lower-case/);
  bad(`postgres://crm/sales#schema=${"s".repeat(64)}`, /at most 63 characters/);
});

test("fragments: unknown keys, empty values, duplicates, schema with tables", () => {
  bad("postgres://crm/sales#", /fragment after '#' is empty/);
  bad("postgres://crm/sales#column=a.b.c", /unknown fragment key "column"/);
  bad("postgres://crm/sales#schema=", /"schema=" has an empty value/);
  bad("postgres://crm/sales#schema=a&schema=b", /"schema" appears more than once/);
  bad("postgres://crm/sales#table=a.t&table=a.t", /"table=a.t" appears more than once/);
  bad("postgres://crm/sales#schema=a&table=a.t", /either one schema= or a set of table= parts, not both/);
});
