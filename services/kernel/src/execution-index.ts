/**
 * What the workspace stream says of caller-given execution ids, kept per process and caught up from
 * the last revision indexed on every look-up, so the at-most-once check reads only the events
 * appended since the previous check instead of the whole stream.
 *
 * Why not a shorter read: execution ids are chosen by callers (the agent loop, MCP clients, the CLI),
 * so an id may have been claimed at any point of the stream's history; no window of recent events is
 * enough to prove an id was never used. The index keeps every id's claim (its code hash) and the
 * revision of its result, not the result itself: a finished run's result is read back as one event.
 *
 * Bounded: at most `maxWorkspaces` workspaces (least recently checked evicted first, and then folded
 * whole again on its next check) and `maxIds` ids across them.
 */
import type { EventStore } from "@gatehouse/event-store";
import { CodeExecuted, CodeExecutionStarted } from "@gatehouse/proto";
import { streamOf } from "./domain/workspace.ts";

/** An execution id as the stream records it. */
export interface IndexedExecution {
  /** sha256 of the code of its last CodeExecutionStarted ("" when none). */
  started: string;
  /** Revision of its last CodeExecuted carrying a result, or -1. */
  resultRevision: number;
}

interface WorkspaceIndex {
  /** Last revision indexed; -1 before any. */
  revision: number;
  ids: Map<string, IndexedExecution>;
}

/** Bounds of an {@link ExecutionIndex}. */
export interface ExecutionIndexOptions {
  /** Workspaces kept (default 256); 0: keep none, every look-up reads the whole stream. */
  maxWorkspaces?: number;
  /** Execution ids kept across workspaces (default 200,000, about 60 MB at the longest ids). */
  maxIds?: number;
}

/** Per-process index of execution ids over one store. */
export class ExecutionIndex {
  private readonly maxWorkspaces: number;
  private readonly maxIds: number;
  /** Least recently checked first. */
  private readonly workspaces = new Map<string, WorkspaceIndex>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private ids = 0;

  constructor(
    private readonly store: EventStore,
    options: ExecutionIndexOptions = {},
  ) {
    this.maxWorkspaces = options.maxWorkspaces ?? 256;
    this.maxIds = options.maxIds ?? 200_000;
  }

  /**
   * What the stream holds for `executionId`, and the stream's last revision when it was read (the
   * expected revision of a claim made on this answer). Look-ups of one workspace run one at a time.
   * @throws the store's errors.
   */
  lookUp(
    workspaceId: string,
    executionId: string,
  ): Promise<{ revision: number; execution: IndexedExecution | undefined }> {
    const before = this.queues.get(workspaceId) ?? Promise.resolve();
    const run = before.then(async () => {
      const index = await this.catchUp(workspaceId);
      const found = index.ids.get(executionId);
      return { revision: index.revision, execution: found && { ...found } };
    });
    const settled = run.catch(() => {});
    this.queues.set(workspaceId, settled);
    void settled.then(() => {
      if (this.queues.get(workspaceId) === settled) this.queues.delete(workspaceId);
    });
    return run;
  }

  private async catchUp(workspaceId: string): Promise<WorkspaceIndex> {
    let index = this.workspaces.get(workspaceId);
    if (index) {
      this.workspaces.delete(workspaceId);
      this.ids -= index.ids.size;
    }
    index ??= { revision: -1, ids: new Map() };
    const from = index.revision + 1;
    let events = await this.store.readStream(streamOf(workspaceId), { fromRevision: from });
    if (events.length > 0 && events[0]?.revision !== from) {
      // Not the stream that was indexed (a gap): index it whole.
      index = { revision: -1, ids: new Map() };
      events = await this.store.readStream(streamOf(workspaceId));
    }
    for (const e of events) {
      index.revision = e.revision;
      if (e.type === "CodeExecutionStarted") {
        const s = CodeExecutionStarted.fromJSON(e.data);
        const at = index.ids.get(s.executionId);
        if (at) at.started = s.codeSha256;
        else index.ids.set(s.executionId, { started: s.codeSha256, resultRevision: -1 });
      } else if (e.type === "CodeExecuted") {
        const c = CodeExecuted.fromJSON(e.data);
        if (!c.executionId || !c.resultJson) continue;
        const at = index.ids.get(c.executionId);
        if (at) at.resultRevision = e.revision;
        else index.ids.set(c.executionId, { started: "", resultRevision: e.revision });
      }
    }
    this.keep(workspaceId, index);
    return index;
  }

  private keep(workspaceId: string, index: WorkspaceIndex): void {
    if (this.maxWorkspaces === 0 || index.ids.size > this.maxIds) return;
    this.workspaces.set(workspaceId, index);
    this.ids += index.ids.size;
    for (const [id, w] of this.workspaces) {
      if (this.workspaces.size <= this.maxWorkspaces && this.ids <= this.maxIds) break;
      this.workspaces.delete(id);
      this.ids -= w.ids.size;
    }
  }
}
