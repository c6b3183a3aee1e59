/**
 * One execution of a workspace over HTTP: the snippet an agent ran and its console, so an approver
 * reviewing a turn's writes can read the code that produced them. Code and console are untrusted
 * text written by an agent: render them as text (invisible characters made visible), never as HTML.
 */

/**
 * GET /api/workspaces/:ws/executions/:executionId — answered to every person who can read the
 * workspace (owner, members, auditors); 404 `not_found` naming the execution when the workspace has
 * no finished execution with that id.
 */
export interface ExecutionView {
  executionId: string;
  /** The snippet as it ran (UTF-8, at most 256 KiB kept). */
  code: string;
  /** True when the snippet was longer and `code` was cut (at a character boundary). */
  codeTruncated: boolean;
  /** Console output, one entry per line as "<level>: <text>" (at most 64 KiB in all). */
  console: string[];
  /** True when console lines were dropped from the end to stay within the bound. */
  consoleTruncated: boolean;
  /** False when the snippet threw, timed out or did not compile. */
  ok: boolean;
  /** Why it failed ("" when ok). */
  error: string;
  /** Wall time of the run, milliseconds. */
  durationMs: number;
  /** When the run ended, ISO 8601 UTC. */
  executedAt: string;
  /** Built-in agent turns only: the person's chat message that started the turn. */
  chatMessage?: string;
  /** Ids of the actions the execution submitted, in submission order. */
  actionIds: number[];
}
