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
  ].join("\n");
  const iface = assembleInterface(
    binding,
    [
      `A git repository (${resource.repoPath.split("/").pop() ?? "repo"}). ${scope}`,
      "Every read is recorded; commits are simulated until a person approves them.",
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
        doc: ["A text file's content (at most 1 MiB). Pending commits are included."],
        signature: "(args: { path: string; ref?: string }): Promise<string>;",
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
        name: "commit",
        doc: [
          'Commits changes to an existing branch. Simulated: returns a provisional id ("~1") at once; written after approval.',
        ],
        signature:
          "(args: { branch: string; message: string; changes: GitFileChange[] }): Promise<{ id: string; branch: string; pending: true }>;",
      },
    ],
  );
  return `${types}\n${iface}`;
}
