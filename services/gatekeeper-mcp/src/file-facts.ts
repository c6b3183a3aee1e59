/**
 * What a staged file write of a filesystem MCP server (the shape of @modelcontextprotocol/
 * server-filesystem: `write_file`, `edit_file`, `move_file`, `create_directory`, with
 * `get_file_info` and `read_text_file`/`read_file` to read) would do to the files as they are now,
 * for the approver: a unified diff against the current content, a destructive risk when an
 * existing file is replaced, and pre-flight warnings (the parent directory does not exist, the
 * destination exists, the current content could not be read).
 *
 * The state is read through the SAME server's read tools, and only to describe the action: those
 * reads are never recorded as observations and their results never reach the caller. An
 * `edit_file` is previewed with the server's own `dryRun: true` (a read-only diff), and only when
 * the tool's input schema declares `dryRun`. Only permitted tools (the binding's catalog) are
 * called. Every read is bounded by one deadline (default 2 s); describing never fails: what
 * could not be read becomes a pre-flight warning.
 */
import { dirname, posix } from "node:path";
import { oneLine, type UntrustedBlock } from "@gatehouse/gatekeeper-kit";
import type { ActionRisk } from "@gatehouse/proto";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff";
import type { CatalogTool } from "./catalog.ts";

/** Calls a tool of the bound server for describing only (no observation), answering within `timeoutMs`. */
export type DescribeCall = (
  tool: string,
  args: Record<string, unknown>,
  timeoutMs: number,
) => Promise<CallToolResult>;

/** What the describe-reads found, merged into the staged action's description. */
export interface FileFacts {
  /** Risks from the current state, e.g. destructive "replaces the existing file …". */
  risks: ActionRisk[];
  /**
   * True when these facts say whether the call replaces existing data: the tool's generic
   * destructive risk (by annotation or name) is then replaced by `risks`.
   */
  knowsDestructive: boolean;
  /** One-line warnings shown before approval, e.g. "the parent directory /a/b does not exist …". */
  preflightWarnings: string[];
  /** Trusted Markdown lines for the description (no untrusted names in them). */
  details: string[];
  /** Untrusted blocks for the description, e.g. the diff against the current content. */
  blocks: UntrustedBlock[];
}

/** Options of `describeFileCall`. */
export interface FileFactsInput {
  tool: string;
  args: Record<string, unknown>;
  /** The binding's permitted tools: only these are called. */
  tools: ReadonlyMap<string, CatalogTool>;
  call: DescribeCall;
  /** Deadline for all describe-reads of this call, in milliseconds (default 2000). */
  timeoutMs?: number;
  /** This session's pending create_directory actions: action id → path. */
  pendingDirs?: ReadonlyMap<number, string>;
  /**
   * False when the files' content is restricted data (the binding's policy): only metadata is
   * read (get_file_info), no content and no dry run, so no restricted text enters a description.
   */
  readContent?: boolean;
}

/** Files over this many bytes are not read for a diff (the description says so). */
export const MAX_DIFF_SOURCE_BYTES = 256 * 1024;
/** Byte budget of the diff block in the description. */
export const DIFF_BLOCK_BYTES = 64 * 1024;
const DEFAULT_TIMEOUT_MS = 2000;

type Read = { ok: true; text: string } | { ok: false; missing: boolean; reason: string };

interface Stat {
  isFile: boolean;
  isDirectory: boolean;
  size: number;
}
type StatRead = { ok: true; stat: Stat } | { ok: false; missing: boolean; reason: string };

const MISSING = /ENOENT|no such file|does not exist/i;

function textOf(r: CallToolResult): string {
  return (r.content ?? [])
    .filter((c): c is { type: "text"; text: string } => c.type === "text" && typeof c.text === "string")
    .map((c) => c.text)
    .join("\n");
}

class Reader {
  readonly #call: DescribeCall;
  readonly #deadline: number;
  constructor(call: DescribeCall, timeoutMs: number) {
    this.#call = call;
    this.#deadline = Date.now() + timeoutMs;
  }

  async text(tool: string, args: Record<string, unknown>): Promise<Read> {
    const left = this.#deadline - Date.now();
    if (left <= 0) return { ok: false, missing: false, reason: "timed out" };
    let timer: NodeJS.Timeout | undefined;
    try {
      const r = await Promise.race([
        this.#call(tool, args, left),
        new Promise<never>((_, rej) => {
          timer = setTimeout(() => rej(new Error("timed out")), left);
        }),
      ]);
      const text = textOf(r);
      if (r.isError === true) return { ok: false, missing: MISSING.test(text), reason: text || "error" };
      return { ok: true, text };
    } catch (err) {
      const msg = (err as Error).message ?? "error";
      return { ok: false, missing: false, reason: /timed? ?out/i.test(msg) ? "timed out" : msg };
    } finally {
      clearTimeout(timer);
    }
  }

  /** get_file_info of `path`, parsed from its "key: value" lines. */
  async stat(path: string): Promise<StatRead> {
    const r = await this.text("get_file_info", { path });
    if (!r.ok) return r;
    const field = (k: string) => new RegExp(`^${k}:\\s*(.*)$`, "m").exec(r.text)?.[1]?.trim();
    return {
      ok: true,
      stat: {
        isFile: field("isFile") === "true",
        isDirectory: field("isDirectory") === "true",
        size: Number(field("size") ?? Number.NaN),
      },
    };
  }
}

function properties(t: CatalogTool | undefined): Record<string, unknown> {
  const p = (t?.tool.inputSchema as { properties?: unknown } | undefined)?.properties;
  return p && typeof p === "object" ? (p as Record<string, unknown>) : {};
}

/** `reason` of a failed read as a short clause for a warning. */
function why(reason: string): string {
  return oneLine(reason.replace(/^(MCP error -?\d+:\s*)?(Error:\s*)?/, ""), 160);
}

/** Lines of `text`: line breaks, plus one for a last line without a break. */
function lineCount(text: string): number {
  const breaks = (text.match(/\n/g) ?? []).length;
  return text === "" ? 0 : text.endsWith("\n") ? breaks : breaks + 1;
}

/**
 * The unified diff of `before` → `after` of `path` (file headers "--- <path>\tcurrent" and
 * "+++ <path>\tafter this call", then hunks with 3 lines of context; no final line break), via
 * the `diff` package.
 */
export function fileDiff(path: string, before: string, after: string): string {
  return createTwoFilesPatch(path, path, before, after, "current", "after this call", {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
  }).replace(/\n$/, "");
}

function counts(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of diff.split("\n")) {
    if (l.startsWith("+") && !l.startsWith("+++ ")) added++;
    else if (l.startsWith("-") && !l.startsWith("--- ")) removed++;
  }
  return { added, removed };
}

/** The pending create_directory (id) that creates `dir`, if any (it creates every ancestor too). */
function pendingCreator(dir: string, pending: ReadonlyMap<number, string> | undefined): number | undefined {
  const d = posix.normalize(dir).replace(/\/+$/, "");
  for (const [id, p] of pending ?? []) {
    const q = posix.normalize(p).replace(/\/+$/, "");
    if (q === d || q.startsWith(`${d}/`)) return id;
  }
  return undefined;
}

/** Facts under construction. */
function empty(): FileFacts {
  return { risks: [], knowsDestructive: false, preflightWarnings: [], details: [], blocks: [] };
}

/**
 * Warns when `path`'s parent directory does not exist (or is not a directory), naming a pending
 * create_directory of this session that would create it. `verb` names the call, e.g. "write".
 */
async function checkParent(
  r: Reader,
  path: string,
  verb: string,
  f: FileFacts,
  pending: ReadonlyMap<number, string> | undefined,
): Promise<void> {
  const dir = dirname(path);
  const s = await r.stat(dir);
  if (s.ok) {
    if (!s.stat.isDirectory)
      f.preflightWarnings.push(`${oneLine(dir, 160)} is not a directory: the ${verb} would fail`);
    return;
  }
  if (!s.missing) {
    f.preflightWarnings.push(
      `whether the parent directory ${oneLine(dir, 160)} exists could not be checked (${why(s.reason)})`,
    );
    return;
  }
  const creator = pendingCreator(dir, pending);
  f.preflightWarnings.push(
    creator === undefined
      ? `the parent directory ${oneLine(dir, 160)} does not exist: the ${verb} would fail (ENOENT)`
      : `the parent directory ${oneLine(dir, 160)} does not exist yet: pending action ${creator} (create_directory) creates it; the ${verb} fails unless that is applied first`,
  );
}

async function writeFile(
  r: Reader,
  readTool: string,
  path: string,
  content: string,
  pending: ReadonlyMap<number, string> | undefined,
  readContent: boolean,
): Promise<FileFacts> {
  const f = empty();
  const s = await r.stat(path);
  if (!s.ok && s.missing) {
    f.knowsDestructive = true;
    f.details.push("The file does not exist now: the call creates it.");
    await checkParent(r, path, "write", f, pending);
    return f;
  }
  if (!s.ok) {
    f.preflightWarnings.push(
      `the current content of ${oneLine(path, 160)} could not be read (${why(s.reason)}): no diff is shown`,
    );
    return f;
  }
  if (s.stat.isDirectory) {
    f.knowsDestructive = true;
    f.preflightWarnings.push(`${oneLine(path, 160)} is a directory: the write would fail`);
    return f;
  }
  f.knowsDestructive = true;
  const size = Number.isFinite(s.stat.size) ? `${s.stat.size} bytes` : "size unknown";
  if (!readContent || !(s.stat.size <= MAX_DIFF_SOURCE_BYTES)) {
    f.risks.push({
      kind: "destructive",
      reason: `replaces the existing file ${oneLine(path, 160)} (${size})`,
    });
    f.details.push(
      readContent
        ? `The file exists (${size}) and is replaced entirely; its current content is over ${MAX_DIFF_SOURCE_BYTES} bytes and is not diffed here.`
        : `The file exists (${size}) and is replaced entirely; its current content is restricted data and is not shown.`,
    );
    return f;
  }
  const old = await r.text(readTool, { path });
  if (!old.ok) {
    f.risks.push({
      kind: "destructive",
      reason: `replaces the existing file ${oneLine(path, 160)} (${size})`,
    });
    f.preflightWarnings.push(
      `the current content of ${oneLine(path, 160)} could not be read (${why(old.reason)}): no diff is shown`,
    );
    return f;
  }
  if (old.text === content) {
    f.preflightWarnings.push(
      `${oneLine(path, 160)} already holds exactly this content: the write changes nothing`,
    );
    f.details.push("The file exists and already holds exactly this content.");
    return f;
  }
  const diff = fileDiff(path, old.text, content);
  const c = counts(diff);
  f.risks.push({
    kind: "destructive",
    reason: `replaces the existing file ${oneLine(path, 160)} (${lineCount(old.text)} lines; −${c.removed} +${c.added})`,
  });
  f.details.push(
    `The file exists (${lineCount(old.text)} lines, ${size}) and is replaced entirely: the diff against its current content is below.`,
  );
  f.blocks.push({
    label: "Diff against the current content (untrusted; read from the server to describe this call):",
    text: diff,
    lang: "diff",
    name: "Diff",
    maxBytes: DIFF_BLOCK_BYTES,
  });
  return f;
}

/** The diff inside the server's ```diff fence (any fence length), or the text as it is. */
function unfence(text: string): string {
  const m = /^(`{3,})diff\n([\s\S]*?)\n?\1\s*$/.exec(text.trim());
  return (m ? (m[2] ?? "") : text).replace(/\n$/, "");
}

async function editFile(
  r: Reader,
  tools: ReadonlyMap<string, CatalogTool>,
  path: string,
  edits: unknown,
  readContent: boolean,
): Promise<FileFacts> {
  const f = empty();
  if (!readContent) {
    f.details.push("The file's content is restricted data: no dry run of the edits is shown.");
    return f;
  }
  if (!("dryRun" in properties(tools.get("edit_file")))) {
    f.details.push("The server offers no dry run of edits: the edits are shown as text below.");
    return f;
  }
  const d = await r.text("edit_file", { path, edits, dryRun: true });
  if (!d.ok) {
    f.preflightWarnings.push(
      d.reason === "timed out"
        ? `the current content of ${oneLine(path, 160)} could not be read (timed out): no diff is shown`
        : `a dry run of these edits on the current ${oneLine(path, 160)} failed (${why(d.reason)}): the edit would fail`,
    );
    return f;
  }
  const diff = unfence(d.text);
  const c = counts(diff);
  // A targeted edit whose every changed line the diff shows is not pinned as destructive (as a
  // commit's modified files are not): the tool's generic destructive risk is dropped.
  f.knowsDestructive = true;
  f.details.push(
    `The edits change ${c.removed} line(s) and add ${c.added} (the server's dry run against the current content; diff below).`,
  );
  f.blocks.push({
    label: "Diff of the edits against the current content (untrusted; the server's dry run):",
    text: diff,
    lang: "diff",
    name: "Diff",
    maxBytes: DIFF_BLOCK_BYTES,
  });
  return f;
}

async function moveFile(
  r: Reader,
  source: string,
  destination: string,
  pending: ReadonlyMap<number, string> | undefined,
): Promise<FileFacts> {
  const f = empty();
  const s = await r.stat(source);
  if (!s.ok)
    f.preflightWarnings.push(
      s.missing
        ? `the source ${oneLine(source, 160)} does not exist: the move would fail`
        : `whether the source ${oneLine(source, 160)} exists could not be checked (${why(s.reason)})`,
    );
  const d = await r.stat(destination);
  if (d.ok) {
    f.preflightWarnings.push(
      `the destination ${oneLine(destination, 160)} already exists: the move would fail`,
    );
  } else if (d.missing) {
    await checkParent(r, destination, "move", f, pending);
  } else {
    f.preflightWarnings.push(
      `whether the destination ${oneLine(destination, 160)} exists could not be checked (${why(d.reason)})`,
    );
  }
  f.knowsDestructive = s.ok && !d.ok && d.missing;
  return f;
}

async function createDirectory(r: Reader, path: string): Promise<FileFacts> {
  const f = empty();
  const s = await r.stat(path);
  if (s.ok && s.stat.isDirectory) f.details.push("The directory exists already: the call changes nothing.");
  else if (s.ok)
    f.preflightWarnings.push(`${oneLine(path, 160)} exists and is not a directory: the call would fail`);
  return f;
}

/**
 * Describe-reads for a file-writing call of a filesystem server (see the file comment), or null
 * when `tool` is not one of them or the server lacks the read tools (nothing is called then).
 * Never throws: failures and timeouts become pre-flight warnings.
 */
export async function describeFileCall(input: FileFactsInput): Promise<FileFacts | null> {
  const { tool, args, tools } = input;
  if (!tools.has("get_file_info")) return null;
  const readTool = tools.has("read_text_file")
    ? "read_text_file"
    : tools.has("read_file")
      ? "read_file"
      : undefined;
  if (!readTool) return null;
  const r = new Reader(input.call, input.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const readContent = input.readContent ?? true;
  const str = (k: string) => (typeof args[k] === "string" ? (args[k] as string) : undefined);
  try {
    const path = str("path");
    if (tool === "write_file" && path !== undefined && str("content") !== undefined)
      return await writeFile(r, readTool, path, str("content")!, input.pendingDirs, readContent);
    if (tool === "edit_file" && path !== undefined && Array.isArray(args.edits))
      return await editFile(r, tools, path, args.edits, readContent);
    if (tool === "move_file" && str("source") !== undefined && str("destination") !== undefined)
      return await moveFile(r, str("source")!, str("destination")!, input.pendingDirs);
    if (tool === "create_directory" && path !== undefined) return await createDirectory(r, path);
  } catch (err) {
    const f = empty();
    f.preflightWarnings.push(
      `the current state could not be read (${why((err as Error).message ?? "error")})`,
    );
    return f;
  }
  return null;
}
