/**
 * Approver-facing text for MCP tool calls, built from the STAGED payload (tool name + arguments)
 * and the tool's description as listed by the server, never from what the caller claims.
 * Tool description and arguments are untrusted: each is fenced and bounded (4 KiB / 16 KiB by
 * default); when cut, `descriptionIsComplete` is false and a marker says so. The bounding and
 * fencing are the kit's `buildDescription`; the wording is MCP's.
 *
 * Multi-line text arguments (a file's content, an edit's old and new text) are shown as text, each
 * in its own fence after the arguments (language from the call's file extension, e.g. `markdown`
 * for `.md`), never as escaped one-line JSON: the JSON shows a placeholder in their place and the
 * trusted label names which arguments were moved.
 */
import {
  buildDescription,
  codeSpan,
  fenceUntrusted,
  invisibleNote,
  invisibleValues,
  oneLine,
  type UntrustedBlock,
} from "@gatehouse/gatekeeper-kit";

/** Byte budgets (UTF-8) for the untrusted parts. */
export interface DescriptionBudget {
  toolDescriptionBytes: number;
  argumentsBytes: number;
  /** Shared by the multi-line text arguments shown as text blocks (each gets at least 1 KiB). */
  textBytes: number;
}

export const DEFAULT_BUDGET: DescriptionBudget = {
  toolDescriptionBytes: 4 * 1024,
  argumentsBytes: 16 * 1024,
  textBytes: 64 * 1024,
};

/** At most this many multi-line arguments become text blocks; further ones stay in the JSON. */
export const MAX_TEXT_BLOCKS = 20;

/** Title and Markdown description of one staged tool call. */
export interface CallDescription {
  title: string;
  description: string;
  descriptionIsComplete: boolean;
}

/** What a gatekeeper adds after the arguments, e.g. what a describe-read found (see file-facts.ts). */
export interface DescriptionExtra {
  /** Trusted lines after the headline (inline-safe: no untrusted names). */
  details?: string[];
  /** Untrusted blocks after the text arguments, e.g. a diff against the current content. */
  blocks?: UntrustedBlock[];
}

const LANG_BY_EXTENSION: Record<string, string> = {
  md: "markdown",
  markdown: "markdown",
  json: "json",
  yaml: "yaml",
  yml: "yaml",
  toml: "toml",
  ts: "ts",
  tsx: "tsx",
  js: "js",
  mjs: "js",
  cjs: "js",
  py: "python",
  go: "go",
  rs: "rust",
  java: "java",
  sh: "sh",
  bash: "sh",
  sql: "sql",
  html: "html",
  css: "css",
  xml: "xml",
  csv: "csv",
  diff: "diff",
  patch: "diff",
};

/**
 * The fence language for a file path by its extension ("docs/a.md" → "markdown"), "text" when
 * the extension is unknown or absent.
 */
export function languageOf(path: string | undefined): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path ?? "")?.[1]?.toLowerCase();
  return (ext && LANG_BY_EXTENSION[ext]) || "text";
}

/** A multi-line string argument at a JSON path, e.g. "content" or "edits[0].newText". */
interface TextArgument {
  at: string;
  text: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * A copy of `value` with each multi-line string (up to `MAX_TEXT_BLOCKS`) replaced by a
 * placeholder naming it; the strings moved are pushed to `out` in order.
 */
function moveTexts(value: unknown, at: string, out: TextArgument[]): unknown {
  if (typeof value === "string") {
    if (!value.includes("\n") || out.length >= MAX_TEXT_BLOCKS) return value;
    out.push({ at, text: value });
    return `(text shown below as ${at})`;
  }
  if (Array.isArray(value)) return value.map((v, i) => moveTexts(v, `${at}[${i}]`, out));
  if (isRecord(value)) {
    const copy: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) copy[k] = moveTexts(v, at ? `${at}.${k}` : k, out);
    return copy;
  }
  return value;
}

/** "5 lines, 42 bytes, ends with a line break" for an approver's label. */
function shapeOf(text: string): string {
  const breaks = (text.match(/\n/g) ?? []).length;
  const lines = text.endsWith("\n") ? breaks : breaks + 1;
  const bytes = Buffer.byteLength(text, "utf8");
  return `${lines} ${lines === 1 ? "line" : "lines"}, ${bytes} bytes, ${text.endsWith("\n") ? "ends with a line break" : "no line break at the end"}`;
}

/** A JSON path as a code span for a trusted label (every script kept, invisible characters as tokens, ≤80 graphemes). */
function pathSpan(at: string): string {
  return codeSpan(at, 80);
}

/**
 * Describes a staged call `tool(arguments)` on `serverName`.
 * @param toolDescription the tool's description from tools/list (may be undefined).
 * @param extra trusted details and untrusted blocks a gatekeeper adds (e.g. a diff); optional.
 */
export function describeToolCall(
  serverName: string,
  tool: string,
  toolDescription: string | undefined,
  args: unknown,
  budget: DescriptionBudget = DEFAULT_BUDGET,
  extra: DescriptionExtra = {},
): CallDescription {
  const texts: TextArgument[] = [];
  const shown = moveTexts(args ?? {}, "", texts);
  const path = isRecord(args) && typeof args.path === "string" ? args.path : undefined;
  const lang = languageOf(path);
  const perText = Math.max(1024, Math.floor(budget.textBytes / Math.max(1, texts.length)));
  const moved = texts.map((t) => pathSpan(t.at)).join(", ");
  const built = buildDescription({
    headline: `Call MCP tool ${codeSpan(tool)} on server ${codeSpan(serverName)}.`,
    cutWarning: "**Warning: this description was cut to fit its size budget; the full call is larger.**",
    details: extra.details,
    blocks: [
      {
        label: "Tool description (untrusted, from the server):",
        text: toolDescription ?? "(the server gives no description)",
        maxBytes: budget.toolDescriptionBytes,
      },
      {
        label:
          texts.length === 0
            ? "Arguments (untrusted, exactly as staged):"
            : `Arguments (untrusted, exactly as staged; the multi-line text of ${moved} is shown after them as text):`,
        text: JSON.stringify(shown, null, 2),
        lang: "json",
        name: "Arguments",
        maxBytes: budget.argumentsBytes,
      },
      ...texts.map(
        (t): UntrustedBlock => ({
          label: `Argument ${pathSpan(t.at)} as text (untrusted, exactly as staged; ${shapeOf(t.text)}):`,
          text: t.text.endsWith("\n") ? t.text.slice(0, -1) : t.text,
          lang,
          name: `Arguments ${pathSpan(t.at)}`,
          maxBytes: perText,
        }),
      ),
      ...(extra.blocks ?? []),
    ],
  });
  return { title: `Call ${oneLine(tool)} on ${oneLine(serverName)}`, ...built };
}

/**
 * Observation text for a read `tool(arguments)` on `serverName` (arguments fenced and bounded;
 * arguments holding invisible or direction-control characters are named, as in writes).
 * The data read is not copied into the description.
 */
export function describeRead(
  serverName: string,
  tool: string,
  args: unknown,
  budget: DescriptionBudget = DEFAULT_BUDGET,
): { title: string; description: string } {
  const argsText = JSON.stringify(args ?? {}, null, 2);
  const argsBlock = fenceUntrusted(argsText, budget.argumentsBytes, "json");
  const hidden = invisibleNote(invisibleValues({ label: "Arguments", text: argsText, lang: "json" }));
  return {
    title: `Read ${oneLine(tool)} on ${oneLine(serverName)}`,
    description: [
      `Read MCP tool ${codeSpan(tool)} on server ${codeSpan(serverName)}.`,
      "",
      ...(hidden.length > 0 ? [...hidden, ""] : []),
      "Arguments (untrusted):",
      "",
      argsBlock.markdown,
    ].join("\n"),
  };
}
