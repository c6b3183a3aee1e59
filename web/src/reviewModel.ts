/**
 * The review page's model, pure: risky actions first, the rest grouped by binding and action kind
 * with the field names that vary as columns; what holding (excluding) an action means for the
 * actions that depend on it; the "viewed" marks kept per person and workspace.
 */
import type { Action } from "@gatehouse/gateway-contract";

/** Actions of one binding and action kind; `columns` are the field names of its rows, first-seen order. */
export interface ReviewGroup {
  key: string;
  binding: string;
  kind: string;
  columns: string[];
  actions: Action[];
}

/** Groups key: "<binding>/<action kind tag>" ("-" without a kind). */
export function groupKey(a: Action): string {
  return `${a.binding}/${a.actionKind?.tag ?? "-"}`;
}

/** Actions grouped by binding and kind, in order of their first action; columns = every field name seen. */
export function groupActions(actions: Action[]): ReviewGroup[] {
  const groups = new Map<string, ReviewGroup>();
  for (const a of actions) {
    const key = groupKey(a);
    let g = groups.get(key);
    if (!g) {
      g = {
        key,
        binding: a.binding,
        kind: a.actionKind?.label || a.actionKind?.tag || "",
        columns: [],
        actions: [],
      };
      groups.set(key, g);
    }
    g.actions.push(a);
    for (const f of a.fields ?? []) if (!g.columns.includes(f.name)) g.columns.push(f.name);
  }
  return [...groups.values()];
}

/** The value of field `name` of `a`, "" when it has none. */
export function fieldValue(a: Action, name: string): string {
  return (a.fields ?? []).find((f) => f.name === name)?.value ?? "";
}

/**
 * Included actions that (transitively) depend on `id` among `actions`: approving them without `id`
 * is refused, so holding `id` means holding these too or approving `id` after all.
 */
export function dependentsOf(id: number, actions: Action[], included: ReadonlySet<number>): number[] {
  const out = new Set<number>();
  const queue = [id];
  while (queue.length > 0) {
    const current = queue.shift() as number;
    for (const a of actions) {
      if (!out.has(a.id) && a.dependsOn.includes(current)) {
        out.add(a.id);
        queue.push(a.id);
      }
    }
  }
  return [...out].filter((d) => included.has(d)).sort((x, y) => x - y);
}

/** Held actions (transitively) among `actions` that `id` depends on. */
export function heldDependenciesOf(id: number, actions: Action[], included: ReadonlySet<number>): number[] {
  const byId = new Map(actions.map((a) => [a.id, a]));
  const out = new Set<number>();
  const queue = [id];
  while (queue.length > 0) {
    const current = byId.get(queue.shift() as number);
    for (const dep of current?.dependsOn ?? []) {
      if (!out.has(dep) && byId.has(dep)) {
        out.add(dep);
        queue.push(dep);
      }
    }
  }
  return [...out].filter((d) => !included.has(d)).sort((x, y) => x - y);
}

/** `{ "<id>": digest }` for the approve-batch body, one per included action. */
export function digestsOf(actions: Action[], included: ReadonlySet<number>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of actions) if (included.has(a.id)) out[String(a.id)] = a.descriptionDigest;
  return out;
}

/** localStorage key of the viewed marks of one person in one workspace. */
export function viewedKey(personId: string, workspaceId: string): string {
  return `gatehouse.review.viewed.${personId}.${workspaceId}`;
}

/** The viewed group keys stored for a person and workspace (empty when none or unreadable). */
export function loadViewed(personId: string, workspaceId: string): Set<string> {
  try {
    const raw = localStorage.getItem(viewedKey(personId, workspaceId));
    const list: unknown = raw ? JSON.parse(raw) : [];
    return new Set(Array.isArray(list) ? list.filter((x): x is string => typeof x === "string") : []);
  } catch {
    return new Set();
  }
}

/** Stores the viewed group keys of a person and workspace. */
export function saveViewed(personId: string, workspaceId: string, viewed: ReadonlySet<string>): void {
  try {
    localStorage.setItem(viewedKey(personId, workspaceId), JSON.stringify([...viewed]));
  } catch {
    // storage full or disabled: the marks last for this page only
  }
}

/** GET /api/workspaces/:ws/executions/:executionId — the snippet and console of one execution. */
export interface ExecutionSnippet {
  executionId: string;
  code: string;
  codeTruncated: boolean;
  console: string[];
  consoleTruncated: boolean;
  ok: boolean;
  error: string;
  durationMs: number;
  chatMessage?: string;
}
