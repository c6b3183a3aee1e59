/**
 * The review page's fields of a git write's description: a one-line `summary`, the key `fields`,
 * `risks` (egress, destructive, content), `preflightWarnings` and a short `preview`. Computed
 * from the staged payload only (plus what the gatekeeper already read to describe it); nothing
 * here reads the repository or allows anything.
 */
import { contentRisks, oneLine, type ScannedText } from "@gatehouse/gatekeeper-kit";
import { graphemes } from "@gatehouse/gateway-contract/invisible";
import type { ActionDescription, ActionRisk } from "@gatehouse/proto";
import type { CommitPayload } from "./state.ts";

/** The description fields the review page shows first. */
export type ReviewParts = Pick<
  ActionDescription,
  "summary" | "fields" | "risks" | "preflightWarnings" | "preview"
>;

const PREVIEW_LINES = 3;
const PREVIEW_CHARS = 300;
const FIELD_CHARS = 200;

/** The first ≤3 lines / 300 grapheme clusters of `text` (never cut inside one). */
export function previewOf(text: string): string {
  const lines = text.split("\n").slice(0, PREVIEW_LINES).join("\n");
  const chars = graphemes(lines);
  return chars.length > PREVIEW_CHARS ? `${chars.slice(0, PREVIEW_CHARS - 1).join("")}…` : lines;
}

function field(name: string, value: string): { name: string; value: string } {
  return { name, value: oneLine(value, FIELD_CHARS) };
}

function subjectOf(message: string): string {
  return message.split("\n")[0] ?? "";
}

/** Lists names for a reason, at most 5 then "and N more". */
function nameList(names: readonly string[]): string {
  const shown = names.slice(0, 5).map((n) => oneLine(n, 120));
  return names.length > 5 ? `${shown.join(", ")} and ${names.length - 5} more` : shown.join(", ");
}

/**
 * A commit's review fields.
 * @param old each changed path's current text in the agent's view (null = absent, undefined = too large).
 * @param remoteUrl the remote an approved commit is pushed to (remote bindings), if any.
 */
export function commitReview(
  p: CommitPayload,
  old: ReadonlyMap<string, string | null | undefined>,
  remoteUrl: string | undefined,
): ReviewParts {
  const n = p.changes.length;
  const subject = subjectOf(p.message);
  const paths = p.changes.map((c) => c.path);
  const deleted = p.changes.filter((c) => "delete" in c).map((c) => c.path);
  const risks: ActionRisk[] = [];
  if (remoteUrl) risks.push({ kind: "egress", reason: `pushed to ${oneLine(remoteUrl, 200)} once approved` });
  if (deleted.length > 0)
    risks.push({
      kind: "destructive",
      reason: `deletes ${deleted.length === 1 ? "file" : "files"} ${nameList(deleted)}`,
    });
  const texts: ScannedText[] = [{ name: "commit message", text: p.message }];
  for (const c of p.changes) if ("content" in c) texts.push({ name: oneLine(c.path, 120), text: c.content });
  risks.push(...contentRisks(texts));
  const unchanged = p.changes
    .filter((c) => "content" in c && old.get(c.path) === c.content)
    .map((c) => c.path);
  const preflightWarnings = unchanged.length
    ? [
        `${nameList(unchanged)} already ${unchanged.length === 1 ? "holds" : "hold"} exactly this content: the change is empty`,
      ]
    : [];
  return {
    summary: oneLine(`commit ${n} ${n === 1 ? "file" : "files"} to ${p.branch}: "${subject}"`, 200),
    fields: [
      field("branch", p.branch),
      field(n === 1 ? "path" : "paths", n <= 5 ? paths.join(", ") : `${n} files: ${nameList(paths)}`),
      ...(deleted.length ? [field("deletes", nameList(deleted))] : []),
      field("message", subject),
    ],
    risks,
    preflightWarnings,
    preview: previewOf(p.message),
  };
}

/** A createBranch's review fields. @param start how the start point reads, e.g. "main" or a sha. */
export function createBranchReview(name: string, start: string, remoteUrl: string | undefined): ReviewParts {
  return {
    summary: oneLine(`create branch ${name} from ${start}`, 200),
    fields: [field("branch", name), field("from", start)],
    risks: remoteUrl ? [{ kind: "egress", reason: `creates the branch on ${oneLine(remoteUrl, 200)}` }] : [],
    preflightWarnings: [],
    preview: "",
  };
}

/**
 * A push's review fields.
 * @param commits the commits' lines the description lists (pending first), e.g. "~1 (pending): Fix typo".
 */
export function pushReview(
  branch: string,
  remote: string,
  url: string,
  commits: readonly string[],
): ReviewParts {
  return {
    summary: oneLine(`push ${branch} to ${remote}`, 200),
    fields: [field("branch", branch), field("remote", remote), field("url", url)],
    risks: [
      {
        kind: "egress",
        reason: `sends branch ${oneLine(branch, 120)} to remote ${oneLine(remote, 60)} (${oneLine(url, 200)})`,
      },
    ],
    preflightWarnings: [],
    preview: previewOf(commits.join("\n")),
  };
}
