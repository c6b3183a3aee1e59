/**
 * What the Rules page offers per binding: the action kinds its gatekeeper published, of which only
 * the auto-approvable ones can get a rule; the others are listed greyed with the reason. Pure.
 */
import type { AutoApprovalRule, BindingsResponse, LogResponse } from "@gatehouse/gateway-contract";

/** One action kind of one binding as the page shows it. */
export interface KindRow {
  tag: string;
  label: string;
  /** A rule for it is stored. */
  enabled: boolean;
  /** A rule may be enabled (the gatekeeper publishes the kind as auto-approvable). */
  allowed: boolean;
  /** Why no rule can be enabled, when not `allowed`; "" otherwise. */
  why: string;
}

type Binding = BindingsResponse["bindings"][number];

const UNPUBLISHED =
  "this binding was introduced before its gatekeeper published its action kinds; remove it and introduce the resource again to set rules";
const GONE = "the binding is no longer in the workspace";
const NOT_A_KIND = "no action of this binding carries this tag, so the rule never fires; turn it off";

/**
 * Rows by binding name, bindings first in their order, then names only the log or the rules know
 * (a removed binding). Published kinds come in the gatekeeper's order, auto-approvable ones first;
 * a binding that published none falls back to the kinds seen in its log, none of them allowed.
 * A stored rule is always shown (so it can be turned off), even for a tag that is not a kind.
 */
export function ruleRows(
  bindings: Binding[],
  log: Pick<LogResponse, "entries" | "rules">,
): Map<string, KindRow[]> {
  const rows = new Map<string, Map<string, KindRow>>();
  const of = (name: string) => {
    let kinds = rows.get(name);
    if (!kinds) {
      kinds = new Map();
      rows.set(name, kinds);
    }
    return kinds;
  };
  const byName = new Map(bindings.map((b) => [b.name, b]));
  for (const b of bindings) {
    const kinds = of(b.name);
    for (const k of b.actionKinds ?? []) {
      kinds.set(k.tag, {
        tag: k.tag,
        label: k.label,
        enabled: false,
        allowed: k.autoApprovable,
        why: k.autoApprovable
          ? ""
          : k.notAutoApprovableReason || "its gatekeeper never marks it auto-approvable",
      });
    }
  }
  for (const entry of log.entries) {
    if (entry.kind !== "action" || !entry.action.actionKind) continue;
    const binding = byName.get(entry.action.binding);
    if (binding?.actionKinds) continue; // published: the gatekeeper's list is the truth
    const { tag, label } = entry.action.actionKind;
    const kinds = of(entry.action.binding);
    if (!kinds.has(tag)) {
      kinds.set(tag, { tag, label, enabled: false, allowed: false, why: binding ? UNPUBLISHED : GONE });
    }
  }
  for (const rule of log.rules) addRule(of(rule.binding), rule, byName.get(rule.binding));
  const out = new Map<string, KindRow[]>();
  for (const [name, kinds] of rows) {
    out.set(
      name,
      [...kinds.values()].sort((a, b) => Number(b.allowed) - Number(a.allowed)),
    );
  }
  return out;
}

function addRule(kinds: Map<string, KindRow>, rule: AutoApprovalRule, binding: Binding | undefined): void {
  const known = kinds.get(rule.actionKindTag);
  if (known) {
    known.enabled = true;
    return;
  }
  const why = !binding ? GONE : binding.actionKinds ? NOT_A_KIND : UNPUBLISHED;
  kinds.set(rule.actionKindTag, {
    tag: rule.actionKindTag,
    label: rule.actionKindTag,
    enabled: true,
    allowed: false,
    why,
  });
}
