/** startReadModel: the projection tables, their projector (or leadership over it) and the queries. */
import { type EventStore, InvalidEvent, redactUrl } from "@gatehouse/event-store";
import type { ActionDetailView, InboxWorkspaceView, LogPage, LogView } from "@gatehouse/proto";
import pino from "pino";
import type { ProjectionDb } from "./db.ts";
import { ReadModelBehind } from "./errors.ts";
import { Leadership } from "./leader.ts";
import { openPgProjectionDb } from "./pg-db.ts";
import { Progress } from "./progress.ts";
import { Projector } from "./projector.ts";
import * as q from "./queries.ts";
import { openSqliteProjectionDb } from "./sqlite-db.ts";

/** How often a waiter re-reads the stored checkpoint when no in-process batch wakes it, ms. */
const POLL_MS = 50;

/** Options of {@link startReadModel}. */
export interface ReadModelOptions {
  store: EventStore;
  /**
   * "sqlite:<path>" (tables in that file — it may be the event store's own file, opened by a second
   * connection with a busy timeout), "sqlite::memory:" or undefined (in-memory SQLite, rebuilt from the
   * streams at every start), or "postgres://…" (tables in that database; one replica projects).
   */
  url?: string;
  logger?: pino.Logger;
  /** Max time a query waits for the projector to catch up, ms (default 10_000). */
  catchUpTimeoutMs?: number;
  /** Events per projector transaction (default 500). Tests lower it to watch a rebuild progress. */
  batchSize?: number;
}

/** The read model of the workspace streams: see {@link startReadModel}. */
export interface ReadModel {
  /** Global position of the last event whose rows are stored (the checkpoint; 0 = none). */
  checkpoint(): Promise<number>;
  /** Resolves when checkpoint() >= position. @throws ReadModelBehind after timeoutMs (default catchUpTimeoutMs). */
  waitFor(position: number, timeoutMs?: number): Promise<void>;
  /**
   * Inbox views, request order kept, unknown ids left out. Like every query it first waits until the
   * checkpoint reaches store.headPosition() read at call time (read-your-writes).
   * @throws ReadModelBehind when the projector does not catch up within catchUpTimeoutMs.
   */
  inbox(workspaceIds: string[], recentLimit: number): Promise<InboxWorkspaceView[]>;
  /** @throws WorkspaceNotFound / ActionNotFound (from @gatehouse/approval-core); ReadModelBehind. */
  actionDetail(workspaceId: string, actionId: number): Promise<ActionDetailView>;
  /**
   * Entries with log id > afterId, at most `limit` (1..5000), with rules/latched/revision; nextAfterId 0
   * on the last page. @throws WorkspaceNotFound; InvalidField for a limit out of range; ReadModelBehind.
   */
  logPage(workspaceId: string, afterId: number, limit: number): Promise<LogPage>;
  /** The whole log as one LogView, from the tables. @throws WorkspaceNotFound; ReadModelBehind. */
  logView(workspaceId: string): Promise<LogView>;
  /** Drops the rows and checkpoint and projects again from position 0 (the leader does it; resolves when caught up). */
  rebuild(): Promise<void>;
  /** Stops the projector (waits for the in-flight batch) and closes connections. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens the projection tables at `url` and starts the projector over `store` (on PostgreSQL: the
 * replica holding the projector lock projects; the others serve queries from the tables and take over
 * when it goes away). Resolves once the tables exist; the projector catches up in the background.
 * @throws StoreUnavailable (URL redacted) when the PostgreSQL server cannot be reached; InvalidEvent for
 *   a URL that is neither sqlite: nor postgres://; SqliteError when the file cannot be opened.
 */
export async function startReadModel(options: ReadModelOptions): Promise<ReadModel> {
  const url = options.url ?? "sqlite::memory:";
  const logger = (options.logger ?? pino({ level: "silent" })).child({ component: "read-model" });
  const timeout = options.catchUpTimeoutMs ?? 10_000;
  const progress = new Progress();
  let db: ProjectionDb;
  if (url.startsWith("sqlite:")) {
    const rest = url.slice("sqlite:".length);
    const path = rest.startsWith("//") ? rest.slice(2) : rest;
    if (path === "") throw new InvalidEvent("read model URL sqlite: needs a path or :memory:");
    db = openSqliteProjectionDb(path);
  } else if (/^postgres(ql)?:\/\//.test(url)) {
    db = await openPgProjectionDb(url);
  } else {
    throw new InvalidEvent(
      `read model URL ${redactUrl(url)} is not one of sqlite:<path>, sqlite::memory:, postgres://…`,
    );
  }
  let projector: Projector | undefined;
  const newProjector = () => {
    const p = new Projector({ store: options.store, db, logger, progress, batchSize: options.batchSize });
    projector = p;
    p.start();
    return async () => {
      await p.stop();
      if (projector === p) projector = undefined;
    };
  };
  let stopProjector: (() => Promise<void>) | undefined;
  let leadership: Leadership | undefined;
  if (db.dialect === "sqlite") stopProjector = newProjector();
  else leadership = new Leadership({ url, logger, lead: newProjector });

  let closed: Promise<void> | undefined;
  const waitFor = async (position: number, timeoutMs = timeout): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const cp = await db.checkpoint();
      if (cp >= position) return;
      const left = deadline - Date.now();
      if (left <= 0 || closed) throw new ReadModelBehind(cp, position, timeoutMs, progress.lastError);
      projector?.wake();
      await progress.next(Math.min(left, POLL_MS));
    }
  };
  const caughtUp = async () => waitFor(await options.store.headPosition());

  return {
    checkpoint: () => db.checkpoint(),
    waitFor,
    async inbox(workspaceIds, recentLimit) {
      await caughtUp();
      return q.inbox(db, workspaceIds, recentLimit);
    },
    async actionDetail(workspaceId, actionId) {
      await caughtUp();
      return q.actionDetail(db, workspaceId, actionId);
    },
    async logPage(workspaceId, afterId, limit) {
      await caughtUp();
      return q.logPage(db, workspaceId, afterId, limit);
    },
    async logView(workspaceId) {
      await caughtUp();
      return q.logView(db, workspaceId);
    },
    async rebuild() {
      const head = await options.store.headPosition();
      logger.info("read model rebuild: rows and checkpoint dropped");
      await db.reset();
      projector?.wake();
      // No deadline of a query here: a rebuild of a large store takes as long as it takes.
      await waitFor(head, Number.MAX_SAFE_INTEGER / 2);
    },
    close() {
      closed ??= (async () => {
        await stopProjector?.();
        await leadership?.close();
        await db.close();
      })();
      return closed;
    },
  };
}
