/**
 * A per-process cache of each workspace's chat fold, so a step of the agent loop reads only the events
 * appended since the last read instead of the whole workspace stream.
 *
 * Every read catches up to the stream's head first (one `readStream(fromRevision)` that returns nothing
 * when nothing is new), so an append by another process is always seen, and a caller that decides on
 * what it read appends with that revision as the expected one: a later append makes it conflict and
 * read again. Reads of one workspace are serialised; a snapshot once handed out is never changed (a
 * catch-up folds new events into a copy), so a caller may hold it across awaits. Bounded: at most
 * `maxWorkspaces` workspaces, least recently read evicted first, and an estimated `maxBytes` in all.
 */
import { type ChatsState, evolveChats, initialChats } from "@gatehouse/agent-core";
import type { EventStore, StoredEvent } from "@gatehouse/event-store";
import { TurnCompleted, TurnResumed } from "@gatehouse/proto";
import type { Decisions } from "./messages.ts";

/** The chats of a workspace as of `chats.revision`, and the kernel turns' decisions. Never mutated: treat as read-only. */
export interface ChatsSnapshot {
  chats: ChatsState;
  decisions: Decisions;
}

/** Bounds of a {@link ChatsCache}. */
export interface ChatsCacheOptions {
  /** Workspaces kept (default 256); 0 turns the cache off: every read folds the whole stream. */
  maxWorkspaces?: number;
  /** Estimated memory of all kept folds, bytes (default 64 MiB); a fold alone above it is not kept. */
  maxBytes?: number;
}

interface Entry extends ChatsSnapshot {
  /** Estimated memory of this fold, bytes. */
  bytes: number;
}

const DEFAULT_WORKSPACES = 256;
const DEFAULT_BYTES = 64 * 1024 * 1024;

/** Folds a kernel turn's decision into `decisions` (in place): the last TurnResumed/TurnCompleted wins. */
export function evolveDecisions(decisions: Decisions, event: { type: string; data: unknown }): void {
  if (event.type === "TurnResumed") {
    const t = TurnResumed.fromJSON(event.data);
    decisions.set(t.turnId, { state: "resumed", reason: "", results: t.results });
  } else if (event.type === "TurnCompleted") {
    const t = TurnCompleted.fromJSON(event.data);
    decisions.set(t.turnId, { state: "completed", reason: t.reason, results: t.results });
  }
}

/**
 * Rough memory an event adds to the fold, bytes: chat events keep their text (UTF-16, plus object
 * overhead); an observation or action keeps a number; a decision keeps its results.
 */
function weightOf(event: StoredEvent): number {
  if (event.type.startsWith("Chat") || event.type === "TurnResumed" || event.type === "TurnCompleted")
    return 2 * JSON.stringify(event.data).length + 256;
  return 16;
}

/** The chat fold of every workspace of one store, caught up on each read. */
export class ChatsCache {
  readonly maxWorkspaces: number;
  readonly maxBytes: number;
  /** By workspace, least recently read first. */
  private readonly entries = new Map<string, Entry>();
  /** The last queued read of each workspace (reads of one workspace run one after another). */
  private readonly queues = new Map<string, Promise<unknown>>();
  private bytes = 0;

  /** @throws Error naming the option when a bound is not a whole number ≥ 0. */
  constructor(
    private readonly store: EventStore,
    options: ChatsCacheOptions = {},
  ) {
    this.maxWorkspaces = options.maxWorkspaces ?? DEFAULT_WORKSPACES;
    this.maxBytes = options.maxBytes ?? DEFAULT_BYTES;
    for (const [name, v] of [
      ["maxWorkspaces", this.maxWorkspaces],
      ["maxBytes", this.maxBytes],
    ] as const)
      if (!Number.isSafeInteger(v) || v < 0)
        throw new Error(`ChatsCache options.${name} must be a whole number ≥ 0, got ${v}`);
  }

  /** Workspaces kept and their estimated bytes (for tests and benchmarks). */
  stats(): { workspaces: number; bytes: number } {
    return { workspaces: this.entries.size, bytes: this.bytes };
  }

  /**
   * The chats of `workspaceId` as of the stream's head when the read ran.
   * @throws the store's StreamNotFound when the workspace stream has no events; the store's errors.
   */
  read(workspaceId: string): Promise<ChatsSnapshot> {
    if (this.maxWorkspaces === 0) return this.fold(workspaceId);
    const before = this.queues.get(workspaceId) ?? Promise.resolve();
    const run = before.then(() => this.catchUp(workspaceId));
    const settled = run.catch(() => {});
    this.queues.set(workspaceId, settled);
    void settled.then(() => {
      if (this.queues.get(workspaceId) === settled) this.queues.delete(workspaceId);
    });
    return run;
  }

  private async fold(workspaceId: string): Promise<Entry> {
    const events = await this.store.readStream(`workspace-${workspaceId}`);
    const entry: Entry = { chats: initialChats(), decisions: new Map(), bytes: 0 };
    for (const e of events) this.evolve(entry, e);
    return entry;
  }

  private evolve(entry: Entry, event: StoredEvent): void {
    evolveChats(entry.chats, event);
    evolveDecisions(entry.decisions, event);
    entry.bytes += weightOf(event);
  }

  private async catchUp(workspaceId: string): Promise<ChatsSnapshot> {
    const kept = this.entries.get(workspaceId);
    let next: Entry | undefined;
    if (kept) {
      const from = kept.chats.revision + 1;
      const events = await this.store.readStream(`workspace-${workspaceId}`, { fromRevision: from });
      if (events.length === 0) next = kept;
      else if (events[0]?.revision === from) {
        // Fold into a copy: snapshots handed out earlier stay as they were.
        next = { chats: structuredClone(kept.chats), decisions: new Map(kept.decisions), bytes: kept.bytes };
        for (const e of events) this.evolve(next, e);
      }
    }
    // Not kept, or the stream is not what was folded (a gap): fold it whole.
    next ??= await this.fold(workspaceId);
    this.keep(workspaceId, next);
    return { chats: next.chats, decisions: next.decisions };
  }

  private keep(workspaceId: string, entry: Entry): void {
    const old = this.entries.get(workspaceId);
    if (old) {
      this.entries.delete(workspaceId);
      this.bytes -= old.bytes;
    }
    if (entry.bytes > this.maxBytes) return;
    this.entries.set(workspaceId, entry);
    this.bytes += entry.bytes;
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.maxWorkspaces && this.bytes <= this.maxBytes) break;
      this.entries.delete(id);
      this.bytes -= e.bytes;
    }
  }
}

const caches = new WeakMap<EventStore, ChatsCache>();

/** This process's chats cache of `store` (made with default bounds on first use). */
export function chatsCacheOf(store: EventStore): ChatsCache {
  let cache = caches.get(store);
  if (!cache) {
    cache = new ChatsCache(store);
    caches.set(store, cache);
  }
  return cache;
}

/**
 * Replaces this process's chats cache of `store` with one of these bounds (`{ maxWorkspaces: 0 }`: no
 * cache, every read folds the whole stream). Reads in progress finish on the old one.
 * @throws Error naming the option when a bound is not a whole number ≥ 0.
 */
export function configureChatsCache(store: EventStore, options: ChatsCacheOptions): ChatsCache {
  const cache = new ChatsCache(store, options);
  caches.set(store, cache);
  return cache;
}
