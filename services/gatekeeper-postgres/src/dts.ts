/** The `.d.ts` an agent sees for a PostgreSQL binding, assembled with the kit's helpers. */
import { assembleInterface } from "@gatehouse/gatekeeper-kit";
import { formatScopeFragment, type PostgresResource } from "./resource-url.ts";

/** The binding interface for `resource` named `binding` (an upper-case identifier). */
export function generatePostgresDts(binding: string, resource: PostgresResource, maxRows: number): string {
  const scope =
    resource.scope.kind === "database"
      ? "The whole database (unqualified names are in schema public)."
      : `Only ${formatScopeFragment(resource.scope).replaceAll("&", ", ")}.`;
  const types = [
    "type SqlParam = string | number | boolean | null;",
    "type QueryPage = { columns: { name: string; type: string }[]; rows: Record<string, unknown>[]; offset: number; more: boolean; nextOffset?: number; pending: string[]; skippedPending?: { id: string; error: string }[] };",
    "type ExecuteResult = { id: string; pending: true; rowCount: number };",
  ].join("\n");
  const iface = assembleInterface(
    binding,
    [
      `A PostgreSQL database (${resource.name}/${resource.database}). ${scope}`,
      "Every read is recorded; writes are simulated until a person approves them: later reads include your pending writes.",
      "One statement per call; parameters as $1, $2, … (int8 and numeric values come back as strings).",
    ],
    [
      {
        name: "query",
        doc: [
          `Runs one SELECT (read-only). At most ${maxRows} rows per page and what fits one reply; pass nextOffset to continue (use ORDER BY for stable pages).`,
        ],
        signature: "(args: { sql: string; params?: SqlParam[]; offset?: number }): Promise<QueryPage>;",
      },
      {
        name: "listTables",
        doc: ["Tables and views in scope."],
        signature: "(): Promise<{ tables: { schema: string; name: string; kind: string }[] }>;",
      },
      {
        name: "describeTable",
        doc: ['Columns (restricted ones flagged) and primary key of one table ("schema.table" or "table").'],
        signature:
          "(args: { table: string }): Promise<{ schema: string; table: string; columns: { name: string; type: string; nullable: boolean; default: string | null; restricted: boolean }[]; primaryKey: string[] }>;",
      },
      {
        name: "execute",
        doc: [
          "Runs one INSERT, UPDATE or DELETE as a pending write: returns its id and the rows it changes now; applied only after approval, exactly once.",
        ],
        signature: "(args: { sql: string; params?: SqlParam[] }): Promise<ExecuteResult>;",
      },
    ],
  );
  return `${types}\n${iface}`;
}
