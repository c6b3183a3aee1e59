/**
 * The hash route of the review page: a workspace's pending actions, all of them or one selection —
 * one execution (`execution`), every execution of one built-in agent turn (`turn`: executions named
 * `<turnId>.…`) or listed action ids (`ids`).
 */
export type ReviewSelection =
  | { kind: "all" }
  | { kind: "execution"; executionId: string }
  | { kind: "turn"; turnId: string }
  | { kind: "ids"; ids: number[] };

/** `/ws/<ws>/review[?execution=…|?turn=…|?ids=1,2]` for `selection`. */
export function reviewPath(workspaceId: string, selection: ReviewSelection = { kind: "all" }): string {
  const base = `/ws/${encodeURIComponent(workspaceId)}/review`;
  switch (selection.kind) {
    case "all":
      return base;
    case "execution":
      return `${base}?execution=${encodeURIComponent(selection.executionId)}`;
    case "turn":
      return `${base}?turn=${encodeURIComponent(selection.turnId)}`;
    case "ids":
      return `${base}?ids=${selection.ids.join(",")}`;
  }
}

/**
 * The selection a review page's query names; `ids` keeps the whole positive numbers only.
 * No recognised parameter: every pending action of the workspace.
 */
export function selectionOf(query: URLSearchParams): ReviewSelection {
  const execution = query.get("execution");
  if (execution) return { kind: "execution", executionId: execution };
  const turn = query.get("turn");
  if (turn) return { kind: "turn", turnId: turn };
  const ids = query.get("ids");
  if (ids) {
    const list = ids
      .split(",")
      .map((s) => Number(s.trim()))
      .filter((n) => Number.isInteger(n) && n > 0);
    return { kind: "ids", ids: list };
  }
  return { kind: "all" };
}

/** Whether an action of `executionId` (with id `id`) belongs to `selection`. */
export function inSelection(selection: ReviewSelection, id: number, executionId: string): boolean {
  switch (selection.kind) {
    case "all":
      return true;
    case "execution":
      return executionId === selection.executionId;
    case "turn":
      return executionId === selection.turnId || executionId.startsWith(`${selection.turnId}.`);
    case "ids":
      return selection.ids.includes(id);
  }
}
