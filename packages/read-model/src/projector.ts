/**
 * The projector: reads the store in global order after the stored checkpoint, folds each workspace
 * stream's events into an in-memory WorkspaceState, and writes the rows they changed together with the
 * new checkpoint in one transaction per page of events.
 */
import {
  decodeEvent,
  evolve,
  initialState,
  type WorkspaceState,
  workspaceStreamId,
} from "@gatehouse/approval-core";
import type { EventStore, StoredEvent, Subscription } from "@gatehouse/event-store";
import type pino from "pino";
import type { Batch, EntryRow, ProjectionDb } from "./db.ts";
import type { Progress } from "./progress.ts";
import { allEntryIds, entriesOfChat, entryRow, workspaceRow } from "./rows.ts";
import { touchedId } from "./touched.ts";

/** Prefix of workspace stream ids (approval-core's WORKSPACE_STREAM_PREFIX). */
const WORKSPACE_STREAM_PREFIX = workspaceStreamId("");

/** How long an idle projector waits for a new-event notice before reading again anyway, ms. */
const IDLE_MS = 1000;
/** Backoff after a failure: doubling from this, ms … */
const BACKOFF_MIN_MS = 200;
/** … up to this, ms. */
const BACKOFF_MAX_MS = 30_000;

/** Options of a {@link Projector}. */
export interface ProjectorOptions {
  store: EventStore;
  db: ProjectionDb;
  logger: pino.Logger;
  progress: Progress;
  /** Events read (and written) per transaction (default 500). */
  batchSize?: number;
}

/**
 * Runs from {@link start} until {@link stop}: never throws; a failure is logged, kept in
 * `progress.lastError`, and retried with backoff from the stored checkpoint (in-memory states dropped).
 */
export class Projector {
  private readonly states = new Map<string, WorkspaceState>();
  /** Stored revision per workspace: events at or below it already have their rows. */
  private stored = new Map<string, number>();
  private cursor = 0;
  private stopping = false;
  private running: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  /** A wake() arrived while not paused: the next pause returns at once. */
  private woken = false;
  private readonly batchSize: number;

  constructor(private readonly options: ProjectorOptions) {
    this.batchSize = options.batchSize ?? 500;
  }

  /** Starts projecting in the background. */
  start(): void {
    this.running ??= this.run();
  }

  /** Signals that new events or a rebuild may be waiting; cheap. */
  wake(): void {
    this.woken = true;
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  /** Stops after the in-flight batch; resolves when it is committed (or failed). Idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.running;
  }

  private async run(): Promise<void> {
    const { logger, progress } = this.options;
    let failures = 0;
    while (!this.stopping) {
      try {
        await this.project();
        failures = 0;
      } catch (error) {
        failures++;
        progress.lastError = (error as Error).message;
        progress.notify();
        const ms = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (failures - 1));
        logger.error(
          { err: error, retryInMs: ms },
          "read model projector failed; retrying from the checkpoint",
        );
        await this.pause(ms);
      }
    }
  }

  /** One term: from the stored checkpoint until stopped (returns) or the checkpoint moves under it (returns). */
  private async project(): Promise<void> {
    const { store, db, logger, progress } = this.options;
    this.states.clear();
    this.cursor = await db.checkpoint();
    this.stored = await db.workspaceRevisions();
    logger.info({ from: this.cursor }, "read model projecting");
    const head = await store.headPosition();
    const notices: Subscription = store.subscribeToAll({
      after: head,
      onEvent: () => this.wake(),
      onError: (err) => logger.warn({ err }, "read model: new-event notices stopped; polling"),
    });
    try {
      while (!this.stopping) {
        const page = await store.readAll({ fromPosition: this.cursor + 1, maxCount: this.batchSize });
        if (page.length === 0) {
          if ((await db.checkpoint()) !== this.cursor) {
            logger.info("read model checkpoint moved (rebuild or another projector): projecting again");
            return;
          }
          await this.pause(IDLE_MS);
          continue;
        }
        const { batch, written } = await this.apply(page);
        if (!(await db.writeBatch(batch, this.cursor))) {
          logger.info("read model checkpoint moved (rebuild or another projector): projecting again");
          return;
        }
        this.cursor = batch.position;
        for (const ws of written) this.stored.set(ws, (this.states.get(ws) as WorkspaceState).revision);
        progress.lastError = undefined;
        progress.notify();
      }
    } finally {
      await notices.close();
    }
  }

  /** Folds a page into the states and collects the rows it changed. */
  private async apply(page: StoredEvent[]): Promise<{ batch: Batch; written: string[] }> {
    const dirty = new Map<string, Set<number>>();
    const depends: Batch["depends"] = [];
    for (const e of page) {
      if (!e.streamId.startsWith(WORKSPACE_STREAM_PREFIX)) continue;
      const ws = e.streamId.slice(WORKSPACE_STREAM_PREFIX.length);
      const state = await this.stateBefore(ws, e);
      if (e.revision <= state.revision) continue;
      const write = e.revision > (this.stored.get(ws) ?? -1);
      const decoded = e.type === "ChatStarted" ? decodeEvent(e.type, e.data) : undefined;
      const newChat =
        decoded?.type === "ChatStarted" && decoded.data.chatId !== "" && !state.chats.has(decoded.data.chatId)
          ? decoded.data.chatId
          : undefined;
      evolve(state, e);
      if (!write) continue;
      let ids = dirty.get(ws);
      if (!ids) {
        ids = new Set();
        dirty.set(ws, ids);
      }
      const id = touchedId(e);
      if (id !== undefined) ids.add(id);
      if (e.type === "ActionSubmitted")
        for (const d of state.actions.get(e.revision)?.dependsOn ?? [])
          depends.push({ workspaceId: ws, actionId: e.revision, dependsOn: d });
      if (newChat !== undefined) for (const i of entriesOfChat(state, newChat)) ids.add(i);
      if (e.type === "WorkspaceCreated") for (const i of allEntryIds(state)) ids.add(i);
    }
    const entries: EntryRow[] = [];
    const workspaces = [];
    for (const [ws, ids] of dirty) {
      const state = this.states.get(ws) as WorkspaceState;
      workspaces.push(workspaceRow(ws, state));
      for (const id of ids) {
        const row = entryRow(ws, state, id);
        if (row) entries.push(row);
      }
    }
    const position = (page[page.length - 1] as StoredEvent).globalPosition;
    return { batch: { entries, depends, workspaces, position }, written: [...dirty.keys()] };
  }

  /** The workspace's state folded up to just before `e` (read from its stream the first time it is seen). */
  private async stateBefore(ws: string, e: StoredEvent): Promise<WorkspaceState> {
    let state = this.states.get(ws);
    if (state) return state;
    state = initialState();
    if (e.revision > 0) {
      const earlier = await this.options.store.readStream(e.streamId, {
        fromRevision: 0,
        maxCount: e.revision,
      });
      for (const x of earlier) state = evolve(state, x);
    }
    this.states.set(ws, state);
    return state;
  }

  /** Waits `ms` or until {@link wake}. */
  private pause(ms: number): Promise<void> {
    if (this.stopping || this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.woken = false;
        resolve();
      }
      this.wakeUp = done;
    });
  }
}
