/**
 * The capnweb main object of a PostgreSQL binding session. capnweb exposes an RpcTarget's prototype
 * methods only, so exactly the methods below are callable; the binding is held in a private field.
 * Writes are built one at a time in call order (state.inOrder), so each sees every earlier one.
 */
import { RpcTarget } from "capnweb";
import type { Binding } from "./binding.ts";
import * as reads from "./reads.ts";
import { inOrder } from "./state.ts";
import * as writes from "./writes.ts";

/** Method names of a PostgreSQL binding, in .d.ts order. */
export const POSTGRES_METHODS = ["query", "listTables", "describeTable", "execute"] as const;

export class PostgresTarget extends RpcTarget {
  readonly #b: Binding;
  constructor(b: Binding) {
    super();
    this.#b = b;
  }
  query(args?: unknown): Promise<reads.QueryPage> {
    return inOrder(this.#b.state, () => reads.query(this.#b, args ?? {}));
  }
  listTables(): Promise<{ tables: reads.TableInfo[] }> {
    return inOrder(this.#b.state, () => reads.listTables(this.#b));
  }
  describeTable(args?: unknown) {
    return inOrder(this.#b.state, () => reads.describeTable(this.#b, args));
  }
  execute(args?: unknown): Promise<writes.ExecuteResult> {
    return inOrder(this.#b.state, () => writes.execute(this.#b, args ?? {}));
  }
}
