/**
 * The domain of one binding session: reads as observations (reads.ts) and writes as simulated
 * actions (writes.ts) over one shared Binding context. Writes are built one at a time in call
 * order, so concurrent calls still chain correctly.
 */
import type { Binding } from "./binding.ts";
import * as reads from "./reads.ts";
import { inOrder } from "./state.ts";
import * as writes from "./writes.ts";

export { DEFAULT_LIMITS, type Limits, type SessionContext } from "./binding.ts";
export type { DiffPage, FileChunk, FileDiff, FilePage, GrepMatch, GrepPage, LogPage } from "./reads.ts";
export type { WriteResult } from "./writes.ts";

/** Every method of a git binding, as the session's capnweb target calls them. */
export class GitBindingService {
  constructor(readonly binding: Binding) {}

  listFiles(args?: unknown): Promise<reads.FilePage> {
    return reads.listFiles(this.binding, args);
  }
  readFile(args?: unknown): Promise<string> {
    return reads.readFile(this.binding, args);
  }
  readFilePage(args?: unknown): Promise<reads.FileChunk> {
    return reads.readFilePage(this.binding, args);
  }
  log(args?: unknown): Promise<reads.LogPage> {
    return reads.log(this.binding, args);
  }
  grep(args?: unknown): Promise<reads.GrepPage> {
    return reads.grep(this.binding, args);
  }
  diff(args?: unknown): Promise<reads.DiffPage> {
    return reads.diff(this.binding, args);
  }
  commit(args?: unknown): Promise<writes.WriteResult> {
    return inOrder(this.binding.state, () => writes.commit(this.binding, args));
  }
  createBranch(args?: unknown): Promise<writes.WriteResult> {
    return inOrder(this.binding.state, () => writes.createBranch(this.binding, args));
  }
  push(args?: unknown): Promise<writes.WriteResult> {
    return inOrder(this.binding.state, () => writes.push(this.binding, args));
  }
}
