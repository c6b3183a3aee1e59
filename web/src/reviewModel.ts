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
  return heldDependenciesIn(id, new Map(actions.map((a) => [a.id, a])), included);
}

function heldDependenciesIn(
  id: number,
  byId: ReadonlyMap<number, Action>,
  included: ReadonlySet<number>,
): number[] {
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

/**
 * Every included action of `actions` that (transitively) depends on a held one, mapped to those held
 * dependencies (ascending ids) — what `heldDependenciesOf` gives for each, computed once for the page:
 * O(actions + dependency edges) when nothing is held, so a page of thousands re-renders cheaply.
 */
export function blockedByHeld(actions: Action[], included: ReadonlySet<number>): Map<number, number[]> {
  const out = new Map<number, number[]>();
  const held = actions.filter((a) => !included.has(a.id)).map((a) => a.id);
  if (held.length === 0) return out;
  const byId = new Map(actions.map((a) => [a.id, a]));
  const dependents = new Map<number, number[]>();
  for (const a of actions)
    for (const dep of a.dependsOn) {
      if (!byId.has(dep)) continue;
      const list = dependents.get(dep);
      if (list) list.push(a.id);
      else dependents.set(dep, [a.id]);
    }
  const reached = new Set<number>();
  const queue = [...held];
  while (queue.length > 0) {
    for (const d of dependents.get(queue.shift() as number) ?? []) {
      if (reached.has(d)) continue;
      reached.add(d);
      queue.push(d);
    }
  }
  for (const id of reached) {
    if (!included.has(id)) continue;
    const deps = heldDependenciesIn(id, byId, included);
    if (deps.length > 0) out.set(id, deps);
  }
  return out;
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
