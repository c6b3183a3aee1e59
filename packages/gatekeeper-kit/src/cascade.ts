/**
 * Cascades over `dependsOn` (docs/architecture.md "The approval contract"): pure functions on
 * a list of nodes in submission order. Ids are any comparable values (local ids, log ids).
 */

/** An action as cascade computation sees it. */
export interface DependencyNode<Id> {
  id: Id;
  /** Ids this action needs; ids not in the node list are ignored (e.g. already applied). */
  dependsOn: readonly Id[];
}

/** One action rejected by a cascade. */
export interface Cascaded<Id> {
  id: Id;
  /** The root (one of `roots`) whose rejection or failure caused this one. */
  cascadedFrom: Id;
  /** The direct dependency through which it was reached. */
  via: Id;
}

/**
 * Every node that depends, transitively, on one of `roots`, in the order of `nodes` (submission
 * order); the roots themselves are not included. A node reached from several roots names the root
 * reached through its first listed rejected dependency. Cycles are tolerated (each id once).
 */
export function cascadeFrom<Id>(roots: Iterable<Id>, nodes: readonly DependencyNode<Id>[]): Cascaded<Id>[] {
  const origin = new Map<Id, Id>();
  for (const r of roots) origin.set(r, r);
  const found = new Map<Id, Cascaded<Id>>();
  let changed = true;
  while (changed) {
    changed = false;
    for (const n of nodes) {
      if (origin.has(n.id)) continue;
      const via = n.dependsOn.find((d) => origin.has(d));
      if (via === undefined) continue;
      const root = origin.get(via)!;
      origin.set(n.id, root);
      found.set(n.id, { id: n.id, cascadedFrom: root, via });
      changed = true;
    }
  }
  return nodes.filter((n) => found.has(n.id)).map((n) => found.get(n.id)!);
}

/**
 * The transitive dependencies of `id` among `nodes`, in submission order, without `id` itself:
 * what an approver must include to approve `id` ("approving B before A is refused unless the
 * approver includes A").
 */
export function dependencyClosure<Id>(id: Id, nodes: readonly DependencyNode<Id>[]): Id[] {
  const byId = new Map(nodes.map((n) => [n.id, n] as const));
  const seen = new Set<Id>();
  const stack = [...(byId.get(id)?.dependsOn ?? [])];
  while (stack.length > 0) {
    const d = stack.pop()!;
    if (seen.has(d) || d === id || !byId.has(d)) continue;
    seen.add(d);
    stack.push(...byId.get(d)!.dependsOn);
  }
  return nodes.filter((n) => seen.has(n.id)).map((n) => n.id);
}
