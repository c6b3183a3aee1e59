/** The `.d.ts` an agent sees for a git binding, assembled with the kit's helpers. */
import { assembleInterface } from "@gatehouse/gatekeeper-kit";
import type { GitResource } from "./resource-url.ts";

/** The binding interface for `resource` named `binding` (an upper-case identifier). */
export function generateGitDts(binding: string, resource: GitResource): string {
  const scope = [
    resource.branch ? `Branch: ${resource.branch} only.` : "Any branch.",
    resource.pathPrefix ? `Paths under ${resource.pathPrefix} only.` : "The whole repository.",
  ].join(" ");
  const types = [
    "type GitFileChange = { path: string; content: string } | { path: string; delete: true };",
    "type GitLogEntry = { id: string; author: string; date: string; message: string; pending: boolean };",
    'type GitFileDiff = { path: string; status: "added" | "modified" | "deleted"; patch: string; complete: boolean };',
    "type GitWriteResult = { id: string; branch: string; pending: true };",
  ].join("\n");
  const remote = resource.remote !== undefined;
  const iface = assembleInterface(
    binding,
    [
      `A git repository (${resource.repoPath.split("/").pop() ?? "repo"}). ${scope}`,
      "Every read is recorded; writes are simulated until a person approves them.",
      'A `ref` (and createBranch\'s `from`) is a branch, a commit sha, or the id a write returned ("~1": while pending, the branch as of that commit; once applied, the commit it became).',
      remote
        ? "A remote repository: each approved commit or branch is pushed to it."
        : "A local repository: approved commits are written to it; push sends a branch to one of its remotes.",
    ],
    [
      {
        name: "listFiles",
        doc: ["File paths, 1000 per page (page is 0-based). Pending commits are included."],
        signature:
          "(args?: { ref?: string; page?: number }): Promise<{ files: string[]; page: number; more: boolean }>;",
      },
      {
        name: "readFile",
        doc: [
          "A text file's content (at most 1 MiB, and what fits one reply; larger files: readFilePage). Pending commits are included.",
        ],
        signature: "(args: { path: string; ref?: string }): Promise<string>;",
      },
      {
        name: "readFilePage",
        doc: [
          "One page (a fixed size that always fits one reply, about 170 KiB by default) of a file of any size; page is 0-based; pages start and end on whole characters; `more` says whether another follows.",
        ],
        signature:
          "(args: { path: string; ref?: string; page?: number }): Promise<{ content: string; page: number; more: boolean; totalBytes: number }>;",
      },
      {
        name: "log",
        doc: ['History, newest first, 100 per page; pending commits come first with ids like "~1".'],
        signature:
          "(args?: { ref?: string; page?: number }): Promise<{ commits: GitLogEntry[]; page: number; more: boolean }>;",
      },
      {
        name: "grep",
        doc: [
          "Lines containing `pattern` (a fixed string, case-sensitive), 1000 per page. Pending commits are included.",
        ],
        signature:
          "(args: { pattern: string; ref?: string; page?: number }): Promise<{ matches: { path: string; line: number; text: string }[]; page: number; more: boolean }>;",
      },
      {
        name: "diff",
        doc: [
          'Changes from `from` to `to` (default: the current branch with its pending commits). A revision is a branch (its approved tip), a commit sha or a pending commit id ("~1", as of that commit); diff({ from: "main" }) shows what is pending on main. 100 files per page.',
        ],
        signature:
          "(args: { from: string; to?: string; page?: number }): Promise<{ files: GitFileDiff[]; page: number; more: boolean }>;",
      },
      {
        name: "commit",
        doc: [
          'Commits changes to a branch. Simulated: returns a provisional id ("~1") at once; written after approval. A second commit on the same branch depends on the first.',
        ],
        signature:
          "(args: { branch: string; message: string; changes: GitFileChange[] }): Promise<GitWriteResult>;",
      },
      {
        name: "createBranch",
        doc: [
          'Creates branch `name` at `from` (a branch with its pending commits, a sha, or a commit\'s id "~1"; default: the default branch). Simulated.',
        ],
        signature: "(args: { name: string; from?: string }): Promise<GitWriteResult>;",
      },
      {
        name: "push",
        doc: [
          'Pushes `branch` to the repository\'s remote (default "origin"), fast-forward only. Simulated; refused once the workspace read restricted data.',
        ],
        signature: "(args: { branch: string; remote?: string }): Promise<GitWriteResult>;",
      },
    ],
  );
  return `${types}\n${iface}`;
}
