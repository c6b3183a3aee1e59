import type { AutoApprovalRule, BindingsResponse, LogResponse } from "@gatehouse/gateway-contract";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, useParams } from "react-router-dom";
import { createCoalescer } from "../coalesce.ts";
import { LatchBanner } from "../components/LatchBanner.tsx";
import { isForbidden, NoAccess } from "../components/NoAccess.tsx";
import { RemoveBinding } from "../components/RemoveBinding.tsx";
import { Visible } from "../components/Visible.tsx";
import { workspacePath } from "../format.ts";
import { type KindRow, ruleRows } from "../ruleKinds.ts";
import { useLiveEvents, useSession, useWorkspaceName } from "../session.tsx";

/**
 * Auto-approval rules of a workspace: per binding, the action kinds its gatekeeper published, each
 * auto-approvable one with a toggle (admins only; read-only for everyone else) and the others greyed
 * with the reason no rule can approve them (ruleKinds.ts). A stored rule can always be turned off.
 * Rules have no effect while the workspace is latched. The workspace's owner (whatever their role) can
 * also remove a binding here, after a confirmation that says how many of its writes are waiting.
 */
export function RulesPage() {
  const workspaceId = useParams().ws ?? "";
  const { me, api, reportError } = useSession();
  const workspaceName = useWorkspaceName(workspaceId);
  const [bindings, setBindings] = useState<BindingsResponse["bindings"] | null>(null);
  const [log, setLog] = useState<LogResponse | null>(null);
  const [owner, setOwner] = useState("");
  const [denied, setDenied] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [note, setNote] = useState("");
  /** The state a toggle asked for, shown until the gateway answered. */
  const [asked, setAsked] = useState<Record<string, boolean>>({});
  const report = useRef(reportError);
  report.current = reportError;

  const coalescer = useMemo(
    () =>
      createCoalescer(async () => {
        try {
          const [b, l, m] = await Promise.all([
            api.bindings(workspaceId),
            api.log(workspaceId),
            api.members(workspaceId),
          ]);
          setBindings(b.bindings);
          setLog(l);
          setOwner(m.owner);
          setDenied(false);
        } catch (e) {
          setDenied(isForbidden(e));
          report.current(e);
        }
      }),
    [api, workspaceId],
  );
  const reload = useCallback(() => coalescer.request("rules"), [coalescer]);
  useEffect(reload, [reload]);
  useLiveEvents((event) => {
    if (event.type !== "notice" || event.notice.workspaceId === workspaceId) reload();
  });

  const kindsByBinding = useMemo(
    () => (bindings && log ? ruleRows(bindings, log) : new Map<string, KindRow[]>()),
    [bindings, log],
  );

  if (!bindings || !log)
    return denied ? (
      <NoAccess workspaceId={workspaceId} />
    ) : (
      <p className="muted">Loading the rules of {workspaceId}…</p>
    );

  const names = [...new Set([...bindings.map((b) => b.name), ...kindsByBinding.keys()])];

  const toggle = async (binding: string, kind: KindRow) => {
    const key = `${binding}:${kind.tag}`;
    const enabled = !kind.enabled;
    setBusy(key);
    setNote("");
    setAsked((a) => ({ ...a, [key]: enabled }));
    try {
      const result = await api.setRule(workspaceId, { binding, actionKindTag: kind.tag, enabled });
      setLog((l) => l && { ...l, rules: withRule(l.rules, binding, kind.tag, enabled) });
      const drained = result.drained.length;
      setNote(
        `${enabled ? "Enabled" : "Disabled"} auto-approval of ${kind.label} on ${binding}` +
          (drained > 0 ? `; ${drained} pending action(s) were approved right away.` : "."),
      );
    } catch (e) {
      reportError(e);
    } finally {
      setAsked((a) => {
        const { [key]: _, ...rest } = a;
        return rest;
      });
      setBusy(null);
      reload();
    }
  };

  /** Writes of `binding` a removal would reject: pending, or approved and not yet applying. */
  const waitingOf = (binding: string) =>
    log.entries.filter(
      (e) =>
        e.kind === "action" &&
        e.action.binding === binding &&
        (e.action.status === "pending" || e.action.status === "approved"),
    ).length;

  const remove = async (binding: string, reason: string) => {
    setNote("");
    try {
      const result = await api.removeBinding(workspaceId, binding, { reason });
      const n = result.rejected.length + result.cascaded.length;
      setNote(`Removed ${binding}; ${n} waiting write(s) were rejected.`);
      return result;
    } catch (e) {
      reportError(e);
      return undefined;
    } finally {
      reload();
    }
  };

  return (
    <main className="rules">
      <nav className="crumbs">
        <Link to="/">Inbox</Link> › <span title={workspaceId}>{workspaceName}</span> ›{" "}
        <Link to={workspacePath(workspaceId, "log")}>Log</Link> · <strong>Rules</strong> ·{" "}
        <Link to={workspacePath(workspaceId, "chats")}>Chats</Link>
      </nav>
      <h1>Auto-approval rules of {workspaceName}</h1>
      {log.latched && <LatchBanner workspaceName={workspaceName} />}
      <p className="hint">
        A rule approves, without a person, every action of one kind on one binding, in submission order,
        stopping at the first action that needs a person. Only kinds the binding's gatekeeper marks
        auto-approvable can have a rule; the others are greyed, with the reason.
      </p>
      {!me.canSetRules && (
        <p className="banner info" data-testid="rules-read-only">
          Read-only: only an admin can change auto-approval rules.
        </p>
      )}
      {note && (
        <p className="banner info" role="status">
          <Visible text={note} />
        </p>
      )}
      {names.map((name) => {
        const binding = bindings.find((b) => b.name === name);
        const kinds = kindsByBinding.get(name) ?? [];
        return (
          <section key={name} className="binding-rules" data-binding={name}>
            <h2>
              <Visible text={name} />{" "}
              {binding && (
                <span className="muted">
                  <Visible text={binding.gatekeeper} /> · trust {binding.trust} ·{" "}
                  <code>
                    <Visible text={binding.url} />
                  </code>
                </span>
              )}
            </h2>
            {binding && owner === `user:${me.subject}` && (
              <RemoveBinding
                binding={name}
                waiting={waitingOf(name)}
                onRemove={(reason) => remove(name, reason)}
              />
            )}
            {kinds.length === 0 && (
              <p className="muted">
                {binding?.actionKinds
                  ? "This binding has no actions (every method reads): nothing to auto-approve."
                  : "No classified actions seen on this binding yet."}
              </p>
            )}
            <ul className="rule-list">
              {kinds.map((kind) => (
                <li
                  key={kind.tag}
                  data-testid="rule"
                  data-binding={name}
                  data-tag={kind.tag}
                  data-allowed={kind.allowed}
                  className={kind.allowed ? undefined : "rule-never"}
                >
                  <label>
                    <input
                      type="checkbox"
                      data-testid="rule-toggle"
                      checked={asked[`${name}:${kind.tag}`] ?? kind.enabled}
                      disabled={!me.canSetRules || busy !== null || (!kind.allowed && !kind.enabled)}
                      onChange={() => void toggle(name, kind)}
                    />{" "}
                    <Visible text={kind.label} />{" "}
                    <code>
                      <Visible text={kind.tag} />
                    </code>
                  </label>
                  {kind.enabled && <span className="badge status-applied">auto-approved</span>}
                  {!kind.allowed && (
                    <span className="muted rule-why" data-testid="rule-why">
                      {kind.enabled ? "" : "always needs a person: "}
                      <Visible text={kind.why} />
                    </span>
                  )}
                </li>
              ))}
            </ul>
          </section>
        );
      })}
    </main>
  );
}

function withRule(
  rules: AutoApprovalRule[],
  binding: string,
  tag: string,
  enabled: boolean,
): AutoApprovalRule[] {
  const others = rules.filter((r) => r.binding !== binding || r.actionKindTag !== tag);
  return enabled ? [...others, { binding, actionKindTag: tag }] : others;
}
