import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import type { PostgresScope } from "../src/resource-url.ts";
import {
  checkStatementSync,
  loadParser,
  type ScopeCheckOptions,
  type ScopeDecision,
} from "../src/statement-scope.ts";

const TABLES: PostgresScope = {
  kind: "tables",
  tables: [
    { schema: "app", table: "orders" },
    { schema: "app", table: "customers" },
  ],
};
const read = (sql: string, scope: PostgresScope = TABLES): ScopeDecision =>
  checkStatementSync(sql, { method: "read", scope });
const write = (
  sql: string,
  scope: PostgresScope = TABLES,
  extra: Partial<ScopeCheckOptions> = {},
): ScopeDecision => checkStatementSync(sql, { method: "write", scope, ...extra });

function refused(d: ScopeDecision, reason: RegExp): void {
  assert.equal(d.ok, false, `expected a refusal, got ${JSON.stringify(d)}`);
  if (!d.ok) assert.match(d.reason, reason);
}
function allowed(d: ScopeDecision): Extract<ScopeDecision, { ok: true }> {
  if (!d.ok) assert.fail(`expected allowed, got: ${d.reason}`);
  return d;
}
const names = (d: ScopeDecision) =>
  allowed(d)
    .relations.map((r) => `${r.schema}.${r.table}`)
    .sort();

before(() => loadParser());

describe("issue 17 acceptance refusals", () => {
  test("a table outside #table= is refused, naming it and the scope", () => {
    refused(
      read("SELECT * FROM app.invoices"),
      /relation app\.invoices is outside the granted scope \(tables app\.orders, app\.customers\)/,
    );
  });
  test("a CTE reaching an out-of-scope table is refused", () => {
    refused(read("WITH x AS (SELECT * FROM app.invoices) SELECT * FROM x"), /app\.invoices is outside/);
  });
  test("a subquery in WHERE reaching an out-of-scope table is refused", () => {
    refused(read("SELECT * FROM orders WHERE id IN (SELECT order_id FROM app.invoices)"), /app\.invoices/);
  });
  test("a scalar subquery in the select list and a lateral join are walked too", () => {
    refused(read("SELECT (SELECT max(x) FROM secret.t) FROM orders"), /secret\.t is outside/);
    refused(
      read("SELECT * FROM orders o, LATERAL (SELECT * FROM app.invoices i WHERE i.o = o.id) l"),
      /app\.invoices/,
    );
  });
  test("pg_read_file is refused by name", () => {
    refused(read("SELECT pg_read_file('/etc/passwd')"), /function pg_read_file is not on the list/);
    refused(
      read("SELECT * FROM pg_catalog.pg_read_binary_file('/etc/passwd')"),
      /pg_catalog\.pg_read_binary_file/,
    );
  });
  test("COPY … TO PROGRAM is refused as running a shell command", () => {
    refused(read("COPY app.orders TO PROGRAM 'curl evil'"), /PROGRAM runs a shell command/);
    refused(write("COPY app.orders FROM '/tmp/x'"), /Copy is refused: COPY reads or writes files/);
  });
  test("SET ROLE, SET and RESET are refused", () => {
    refused(read("SET ROLE postgres"), /SET ROLE/);
    refused(write("SET search_path = evil"), /SET\/RESET changes session settings/);
    refused(read("RESET ALL"), /VariableSet is refused/);
  });
  test("a second statement after ';' is refused", () => {
    refused(read("SELECT 1 FROM orders; DROP TABLE app.orders"), /exactly one statement is allowed; found 2/);
  });
  test("a write through a read method is refused", () => {
    refused(read("DELETE FROM app.orders WHERE id = 1"), /a write \(DELETE\) through a read method/);
    refused(read("INSERT INTO app.orders VALUES (1)"), /INSERT\) through a read method/);
  });
  test("a data-modifying CTE in a read is refused", () => {
    refused(
      read("WITH d AS (DELETE FROM app.orders RETURNING *) SELECT * FROM d"),
      /data-modifying statements in WITH/,
    );
  });
});

describe("statement kinds", () => {
  test("SELECT through execute is refused", () => {
    refused(write("SELECT * FROM app.orders"), /through a read method \(query\), not execute/);
  });
  test("locking clauses are refused", () => {
    refused(read("SELECT * FROM app.orders FOR UPDATE"), /locking clauses/);
    refused(read("SELECT * FROM app.orders FOR SHARE SKIP LOCKED"), /locking clauses/);
  });
  test("SELECT INTO is refused", () => {
    refused(read("SELECT * INTO app.copy FROM app.orders"), /SELECT … INTO creates a table/);
  });
  test("DO, CALL, GRANT, LISTEN, NOTIFY, transaction control, PREPARE, EXECUTE, LOCK, VACUUM, MERGE are refused by kind", () => {
    const cases: [string, RegExp][] = [
      ["DO $$ BEGIN PERFORM 1; END $$", /Do is refused: DO runs an anonymous code block/],
      ["CALL app.p()", /Call is refused/],
      ["GRANT ALL ON app.orders TO public", /Grant is refused/],
      ["LISTEN x", /Listen is refused/],
      ["NOTIFY x", /Notify is refused/],
      ["BEGIN", /Transaction is refused/],
      ["COMMIT", /Transaction is refused/],
      ["PREPARE p AS SELECT 1", /Prepare is refused/],
      ["EXECUTE p", /Execute is refused/],
      ["LOCK app.orders", /Lock is refused/],
      ["VACUUM app.orders", /Vacuum is refused/],
      [
        "MERGE INTO app.orders o USING app.customers c ON o.c = c.id WHEN MATCHED THEN DELETE",
        /Merge is refused/,
      ],
      ["CREATE FUNCTION app.f() RETURNS int AS 'select 1' LANGUAGE sql", /creating functions/],
      ["SHOW ALL", /SHOW reads server settings/],
      ["CREATE EXTENSION dblink", /extensions are the administrator's/],
    ];
    for (const [sql, reason] of cases) {
      refused(write(sql, TABLES, { allowDdl: true }), reason);
      refused(read(sql), reason);
    }
  });
  test("EXPLAIN of a SELECT is a read; EXPLAIN ANALYZE of a write is refused", () => {
    assert.deepEqual(names(read("EXPLAIN ANALYZE SELECT * FROM app.orders")), ["app.orders"]);
    refused(read("EXPLAIN ANALYZE DELETE FROM app.orders"), /EXPLAIN ANALYZE of anything but a SELECT/);
    refused(write("EXPLAIN ANALYZE DELETE FROM app.orders"), /EXPLAIN ANALYZE/);
  });
  test("DDL is refused unless allowDdl, then checked against the scope", () => {
    refused(write("CREATE TABLE app.orders2 (id int)"), /DDL .* is not allowed for this server \(allowDdl\)/);
    refused(write("TRUNCATE app.orders"), /allowDdl/);
    refused(write("DROP TABLE app.orders"), /allowDdl/);
    const schema: PostgresScope = { kind: "schema", schema: "app" };
    assert.equal(allowed(write("CREATE TABLE app.orders2 (id int)", schema, { allowDdl: true })).kind, "ddl");
    assert.equal(
      allowed(write("ALTER TABLE orders ADD COLUMN note text", schema, { allowDdl: true })).kind,
      "ddl",
    );
    refused(write("DROP TABLE other.t", schema, { allowDdl: true }), /other\.t is outside/);
    refused(
      write("CREATE TABLE app.x (id int REFERENCES other.t(id))", schema, { allowDdl: true }),
      /other\.t is outside/,
    );
    assert.deepEqual(names(write("TRUNCATE app.orders", schema, { allowDdl: true })), ["app.orders"]);
    refused(write("DROP SCHEMA app", schema, { allowDdl: true }), /DROP of schema is refused/);
    refused(read("CREATE TABLE app.x (id int)", schema), /DDL through a read method/);
  });
  test("empty input is refused", () => {
    refused(read("  ;  "), /the statement is empty/);
  });
});

describe("writes", () => {
  test("INSERT … RETURNING in scope", () => {
    const d = allowed(write("INSERT INTO app.orders (id, c) VALUES ($1, $2) RETURNING id"));
    assert.equal(d.kind, "insert");
    assert.deepEqual(d.flags, []);
  });
  test("INSERT … SELECT from an out-of-scope table is refused", () => {
    refused(write("INSERT INTO app.orders SELECT * FROM app.invoices"), /app\.invoices/);
  });
  test("UPDATE … FROM within scope, with RETURNING", () => {
    const d = allowed(
      write("UPDATE app.orders o SET c = c.id FROM app.customers c WHERE o.c = c.id RETURNING o.id"),
    );
    assert.equal(d.kind, "update");
    assert.deepEqual(names(d), ["app.customers", "app.orders"]);
  });
  test("DELETE … USING out of scope and RETURNING a subquery out of scope are refused", () => {
    refused(write("DELETE FROM app.orders USING app.invoices i WHERE i.id = orders.id"), /app\.invoices/);
    refused(write("DELETE FROM app.orders WHERE id = 1 RETURNING (SELECT 1 FROM x.y)"), /x\.y/);
  });
  test("UPDATE and DELETE without WHERE are allowed but flagged", () => {
    assert.deepEqual(allowed(write("DELETE FROM app.orders")).flags, ["no_where_clause"]);
    assert.deepEqual(allowed(write("UPDATE app.orders SET c = 1")).flags, ["no_where_clause"]);
    assert.deepEqual(allowed(write("UPDATE app.orders SET c = 1 WHERE id = 2")).flags, []);
  });
  test("an out-of-scope write target is refused even when a CTE has its name", () => {
    refused(write("WITH invoices AS (SELECT 1) DELETE FROM invoices"), /app\.invoices is outside/);
  });
  test("a data-modifying CTE inside a write is refused", () => {
    refused(
      write(
        "WITH d AS (DELETE FROM app.customers RETURNING id) DELETE FROM app.orders WHERE c IN (SELECT id FROM d)",
      ),
      /data-modifying/,
    );
  });
  test("INSERT … ON CONFLICT DO UPDATE is walked", () => {
    assert.equal(
      allowed(write("INSERT INTO app.orders (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET c = 2")).kind,
      "insert",
    );
    refused(
      write("INSERT INTO app.orders (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET c = (SELECT 1 FROM z.z)"),
      /z\.z/,
    );
  });
});

describe("relations, CTEs and names", () => {
  test("joins within scope are allowed and every relation is listed once", () => {
    const d = read(
      "SELECT * FROM app.orders o JOIN app.customers c ON o.c = c.id LEFT JOIN orders o2 ON o2.id = o.id",
    );
    assert.deepEqual(names(d), ["app.customers", "app.orders"]);
  });
  test("CTEs over in-scope tables, set operations and VALUES are allowed", () => {
    assert.deepEqual(
      names(
        read(
          "WITH big AS (SELECT * FROM orders WHERE n > 10) SELECT * FROM big UNION SELECT * FROM customers",
        ),
      ),
      ["app.customers", "app.orders"],
    );
    assert.deepEqual(names(read("VALUES (1, 'a'), (2, 'b')")), []);
    assert.equal(
      allowed(
        read("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r"),
      ).kind,
      "select",
    );
  });
  test("a CTE name shadows only inside its own WITH: the real table elsewhere is checked", () => {
    refused(
      read("SELECT * FROM (WITH invoices AS (SELECT 1) SELECT * FROM invoices) s, invoices"),
      /app\.invoices is outside/,
    );
    refused(
      read("SELECT (WITH invoices AS (SELECT 1) SELECT 1), (SELECT count(*) FROM invoices)"),
      /app\.invoices/,
    );
  });
  test("a non-recursive CTE does not shadow inside its own body; a schema-qualified name is never a CTE", () => {
    refused(
      read("WITH invoices AS (SELECT * FROM invoices) SELECT * FROM invoices"),
      /app\.invoices is outside/,
    );
    refused(read("WITH invoices AS (SELECT 1) SELECT * FROM app.invoices"), /app\.invoices is outside/);
  });
  test("a later CTE sees an earlier one", () => {
    assert.deepEqual(
      names(read("WITH a AS (SELECT * FROM orders), b AS (SELECT * FROM a) SELECT * FROM b")),
      ["app.orders"],
    );
  });
  test("unqualified names resolve to the scope's schema", () => {
    assert.deepEqual(names(read("SELECT * FROM orders")), ["app.orders"]);
    assert.deepEqual(names(read("SELECT * FROM t", { kind: "schema", schema: "sales" })), ["sales.t"]);
    assert.deepEqual(names(read("SELECT * FROM t", { kind: "database" })), ["public.t"]);
    assert.deepEqual(names(read("SELECT * FROM hr.people", { kind: "database" })), ["hr.people"]);
  });
  test("unqualified names are refused when the granted tables span several schemas", () => {
    const mixed: PostgresScope = {
      kind: "tables",
      tables: [
        { schema: "a", table: "t" },
        { schema: "b", table: "t" },
      ],
    };
    refused(
      read("SELECT * FROM t", mixed),
      /unqualified and the granted tables span several schemas; write <schema>\.t/,
    );
    assert.deepEqual(names(read("SELECT * FROM a.t JOIN b.t ON true", mixed)), ["a.t", "b.t"]);
  });
  test("system catalogs are refused, qualified or not, even for a whole database", () => {
    const db: PostgresScope = { kind: "database" };
    refused(read("SELECT * FROM pg_catalog.pg_authid", db), /system catalogs \(pg_catalog\)/);
    refused(read("SELECT * FROM information_schema.columns", db), /information_schema/);
    refused(read("SELECT * FROM pg_shadow", db), /unqualified names starting with pg_/);
    refused(read("SELECT * FROM otherdb.public.t", db), /cross-database/);
  });
  test("quoted mixed-case names do not match a lower-case grant", () => {
    refused(read('SELECT * FROM app."Orders"'), /app\.Orders is outside/);
  });
});

describe("functions", () => {
  test("ordinary built-ins are allowed", () => {
    const sql =
      "SELECT count(*), sum(n), avg(n), min(n), max(n), coalesce(c, 0), nullif(a, b), greatest(1, 2), least(1, 2), lower(s), upper(s), " +
      "length(s), substring(s from 1 for 2), trim(s), extract(year from now()), date_trunc('day', now()), jsonb_build_object('a', 1), " +
      "round(n::numeric, 2), CAST(n AS text), now()::date, current_user, row_number() OVER (ORDER BY n) FROM app.orders GROUP BY n";
    assert.equal(allowed(read(sql)).kind, "select");
  });
  test("dangerous functions are refused by name", () => {
    for (const f of [
      "pg_read_file('x')",
      "pg_ls_dir('.')",
      "lo_import('/etc/passwd')",
      "lo_export(1, '/tmp/x')",
      "dblink('host=x', 'select 1')",
      "dblink_exec('x', 'y')",
      "pg_sleep(10)",
      "set_config('role', 'postgres', false)",
      "current_setting('data_directory')",
      "pg_terminate_backend(1)",
      "pg_cancel_backend(1)",
      "txid_current()",
      "pg_advisory_lock(1)",
      "nextval('s')",
    ]) {
      const name = f.slice(0, f.indexOf("("));
      refused(
        read(`SELECT ${f} FROM app.orders`),
        new RegExp(`function ${name} is not on the list of allowed built-in functions`),
      );
    }
  });
  test("a function in FROM and in a write are checked", () => {
    refused(read("SELECT * FROM pg_ls_dir('/')"), /pg_ls_dir/);
    refused(write("UPDATE app.orders SET note = pg_read_file('/etc/passwd') WHERE id = 1"), /pg_read_file/);
  });
  test("schema-qualified functions: granted schema only", () => {
    const schema: PostgresScope = { kind: "schema", schema: "app" };
    assert.equal(allowed(read("SELECT app.total(id) FROM orders", schema)).kind, "select");
    refused(
      read("SELECT other.f()", schema),
      /function other\.f is outside the granted scope \(schema app\)/,
    );
    refused(
      read("SELECT app.total(id) FROM orders"),
      /function app\.total is outside the granted scope \(tables/,
    );
    refused(
      read("SELECT pg_catalog.pg_sleep(1)", schema),
      /function pg_catalog\.pg_sleep is not on the list/,
    );
  });
});

describe("syntax errors", () => {
  test("PostgreSQL's message and 1-based position", () => {
    assert.deepEqual(read("SELEC 1"), { ok: false, reason: 'syntax error at or near "SELEC"', position: 1 });
    assert.deepEqual(read("SELECT * FROM"), {
      ok: false,
      reason: "syntax error at end of input",
      position: 14,
    });
  });
  test("the position counts characters, not bytes", () => {
    assert.deepEqual(read("SELECT 'é', FROM t"), {
      ok: false,
      reason: 'syntax error at or near "FROM"',
      position: 13,
    });
  });
});
