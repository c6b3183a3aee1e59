/**
 * The review page (`/ws/:ws/review[?execution=…|?turn=…|?ids=…]`): a workspace's pending actions
 * (all, one execution, one agent turn or a selection) like a pull request's changed files. Risky
 * actions are pinned first with their reasons; the rest are grouped by binding and action kind, each
 * group a table whose columns are the fields that vary. Every row starts included; holding one
 * shows in place what depends on it. One all-or-nothing batch approves the included actions with
 * the digest of each description shown; approvals not yet applying can be withdrawn.
 */
import type { Action } from "@gatehouse/gateway-contract";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import { ApiRequestError, errorMessage } from "../api.ts";
import { Visible } from "../components/Visible.tsx";
import { WindowedList } from "../components/WindowedList.tsx";
import { useKeyboard } from "../keyboard.ts";
import { Markdown } from "../markdown.tsx";
import "../review.css";
import {
  blockedByHeld,
  dependentsOf,
  digestsOf,
  type ExecutionSnippet,
  fieldValue,
  groupActions,
  loadViewed,
  saveViewed,
} from "../reviewModel.ts";
import { inSelection, type ReviewSelection, selectionOf } from "../reviewPath.ts";
import { useSession } from "../session.tsx";

function selectionLabel(s: ReviewSelection): string {
  switch (s.kind) {
    case "all":
      return "every pending action";
    case "execution":
      return `execution ${s.executionId}`;
    case "turn":
      return `turn ${s.turnId}`;
    case "ids":
      return `actions ${s.ids.join(", ")}`;
  }
}

/** A group (or the risky list) longer than this draws only its rows near the screen. */
const REVIEW_WINDOW_FROM = 100;
/** Estimated height of one review row in CSS pixels before it is measured. */
const REVIEW_ROW_ESTIMATE_PX = 90;

type Snippet =
  | { state: "loading" }
  | { state: "ok"; snippet: ExecutionSnippet }
  | { state: "absent"; why: string };

/** The review page; see the module comment. */
export function ReviewPage() {
  const { ws = "" } = useParams();
  const [query] = useSearchParams();
  const selection = useMemo(() => selectionOf(query), [query]);
  const { me, api, decided, inbox } = useSession();
  const [actions, setActions] = useState<Action[] | null>(null);
  const [loadError, setLoadError] = useState("");
  const [held, setHeld] = useState<Set<number>>(new Set());
  const [cursor, setCursor] = useState(0);
  const [viewed, setViewed] = useState<Set<string>>(() => loadViewed(me.subject, ws));
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState<{ text: string; error: boolean } | null>(null);
  const [approved, setApproved] = useState<Action[]>([]);
  const [snippets, setSnippets] = useState<Map<string, Snippet>>(new Map());
  const [described, setDescribed] = useState<Set<number>>(new Set());

  const load = useCallback(async () => {
    try {
      const inbox = await api.inbox(ws);
      const workspace = inbox.workspaces.find((w) => w.id === ws);
      if (!workspace) throw new Error(`you cannot see workspace ${ws}, or it does not exist`);
      setActions(workspace.pending.filter((a) => inSelection(selection, a.id, a.executionId)));
      setLoadError("");
    } catch (e) {
      setLoadError(errorMessage(e));
    }
  }, [api, ws, selection]);
  // The first list comes from the session's inbox (read once at sign-in, shared with the inbox page),
  // so a cold load does not fetch and parse the same thousands of actions twice; a workspace the
  // inbox does not hold is asked of the gateway, which says why. Later reads (after a decision) ask
  // the gateway. The list is a snapshot: live changes do not move rows under the reader.
  const taken = useRef("");
  useEffect(() => {
    const key = `${ws}?${query.toString()}`;
    if (taken.current === key || inbox.workspaces === null) return;
    taken.current = key;
    const workspace = inbox.workspaces.find((w) => w.id === ws);
    if (!workspace) {
      void load();
      return;
    }
    setActions(workspace.pending.filter((a) => inSelection(selection, a.id, a.executionId)));
    setLoadError("");
  }, [inbox.workspaces, ws, query, selection, load]);

  const executionIds = useMemo(
    () => [...new Set((actions ?? []).map((a) => a.executionId).filter((id) => id !== ""))].slice(0, 10),
    [actions],
  );
  const fetched = useRef(new Set<string>());
  useEffect(() => {
    for (const id of executionIds) {
      if (fetched.current.has(id)) continue;
      fetched.current.add(id);
      setSnippets((m) => new Map(m).set(id, { state: "loading" }));
      api.execution(ws, id).then(
        (snippet) => setSnippets((m) => new Map(m).set(id, { state: "ok", snippet })),
        (e: unknown) =>
          setSnippets((m) =>
            new Map(m).set(id, {
              state: "absent",
              why: e instanceof ApiRequestError && e.status === 404 ? "" : errorMessage(e),
            }),
          ),
      );
    }
  }, [api, ws, executionIds]);

  const all = useMemo(() => actions ?? [], [actions]);
  const { risky, groups, ordered } = useMemo(() => {
    const risky = all.filter((a) => (a.risks ?? []).length > 0);
    const groups = groupActions(all.filter((a) => (a.risks ?? []).length === 0));
    return { risky, groups, ordered: [...risky, ...groups.flatMap((g) => g.actions)] };
  }, [all]);
  const { included, blockedBy } = useMemo(() => {
    const included = new Set(all.filter((a) => !held.has(a.id)).map((a) => a.id));
    return { included, blockedBy: blockedByHeld(all, included) };
  }, [all, held]);
  const blocked = all.filter((a) => blockedBy.has(a.id));

  const setHold = (ids: number[], hold: boolean) =>
    setHeld((h) => {
      const next = new Set(h);
      for (const id of ids) hold ? next.add(id) : next.delete(id);
      return next;
    });
  const toggleDescribed = (id: number) =>
    setDescribed((d) => {
      const next = new Set(d);
      next.has(id) ? next.delete(id) : next.add(id);
      return next;
    });
  const toggleViewed = (key: string) =>
    setViewed((v) => {
      const next = new Set(v);
      next.has(key) ? next.delete(key) : next.add(key);
      saveViewed(me.subject, ws, next);
      return next;
    });

  const approve = async () => {
    if (busy || included.size === 0) return;
    if (blocked.length > 0) {
      setStatus({
        text: `Not sent: ${blocked.map((a) => `#${a.id}`).join(", ")} depend on held actions. Hold them too or approve their dependencies.`,
        error: true,
      });
      return;
    }
    setBusy(true);
    setStatus({ text: `Approving ${included.size} action(s)…`, error: false });
    try {
      const res = await api.approveBatch(ws, {
        actionIds: [...included],
        descriptionDigests: digestsOf(all, included),
        returnOnceRecorded: true,
      });
      decided(res.actions);
      setApproved((prev) => [...res.actions, ...prev.filter((p) => !res.actions.some((r) => r.id === p.id))]);
      setStatus({
        text: `Approved ${res.actions.length} action(s)${held.size > 0 ? `; ${held.size} held, still pending` : ""}.`,
        error: false,
      });
      setHeld(new Set());
      await load();
    } catch (e) {
      setStatus({ text: `Nothing approved: ${errorMessage(e)}`, error: true });
    } finally {
      setBusy(false);
    }
  };

  const withdraw = async (a: Action) => {
    setBusy(true);
    try {
      const res = await api.withdraw(ws, { actionIds: [a.id], reason: "withdrawn on the review page" });
      decided(res.actions);
      setApproved((prev) => prev.map((p) => res.actions.find((r) => r.id === p.id) ?? p));
      setStatus({
        text: `Withdrew the approval of ${res.actions.map((r) => `#${r.id}`).join(", ")}.`,
        error: false,
      });
      await load();
    } catch (e) {
      setStatus({
        text:
          e instanceof ApiRequestError && e.status === 409
            ? `Too late to withdraw #${a.id}: ${e.message}`
            : `Withdrawal failed: ${errorMessage(e)}`,
        error: true,
      });
    } finally {
      setBusy(false);
    }
  };

  useKeyboard((key) => {
    if (ordered.length === 0) return false;
    if (key === "j") setCursor((c) => Math.min(c + 1, ordered.length - 1));
    else if (key === "k") setCursor((c) => Math.max(c - 1, 0));
    else if (key === "x") {
      const a = ordered[Math.min(cursor, ordered.length - 1)];
      if (a) setHold([a.id], !held.has(a.id));
    } else if (key === "a") void approve();
    else return false;
    return true;
  });
  const current = ordered[Math.min(cursor, ordered.length - 1)]?.id;
  useEffect(() => {
    if (current !== undefined)
      document.querySelector(`[data-review-row="${current}"]`)?.scrollIntoView({ block: "nearest" });
  }, [current]);

  const row = (a: Action, columns: string[] | null) => {
    const isHeld = held.has(a.id);
    const dependents = isHeld ? dependentsOf(a.id, all, included) : [];
    const heldDeps = isHeld ? [] : (blockedBy.get(a.id) ?? []);
    const span = 3 + (columns?.length ?? 1);
    const open = described.has(a.id);
    // The second line only when it has something to show: a row is one line otherwise.
    const detailed =
      (a.risks ?? []).length > 0 ||
      (a.preflightWarnings ?? []).length > 0 ||
      a.preview !== "" ||
      open ||
      dependents.length > 0 ||
      heldDeps.length > 0;
    return (
      <tbody
        key={a.id}
        className={`review-row${isHeld ? " held" : ""}${a.id === current ? " current" : ""}`}
        data-review-row={a.id}
        data-held={isHeld ? "true" : "false"}
      >
        <tr>
          <td data-label="Include">
            <input
              type="checkbox"
              aria-label={`include action ${a.id}`}
              checked={!isHeld}
              disabled={!me.canDecide}
              onChange={() => setHold([a.id], !isHeld)}
            />
          </td>
          <td data-label="Action">
            <Link to={`/ws/${encodeURIComponent(ws)}/actions/${a.id}`}>#{a.id}</Link>
          </td>
          <td data-label="Summary" className="review-summary">
            <Visible text={a.summary || a.title} />{" "}
            <button
              type="button"
              className="review-more"
              aria-expanded={open}
              data-testid="description-toggle"
              onClick={() => toggleDescribed(a.id)}
            >
              {open ? "hide description" : "description"}
            </button>
          </td>
          {(columns ?? []).map((c) => (
            <td key={c} data-label={c} className="review-field">
              <Visible text={fieldValue(a, c)} />
            </td>
          ))}
          {columns === null && (
            <td data-label="Binding">
              <Visible text={`${a.binding} · ${a.actionKind?.label || a.actionKind?.tag || ""}`} />
            </td>
          )}
        </tr>
        {detailed && (
          <tr className="review-detail">
            <td colSpan={span}>
              {(a.risks ?? []).length > 0 && (
                <ul className="review-risks" data-testid="risk-reasons">
                  {a.risks.map((r) => (
                    <li key={`${r.kind}:${r.reason}`}>
                      <strong>{r.kind}</strong>: <Visible text={r.reason} />
                    </li>
                  ))}
                </ul>
              )}
              {(a.preflightWarnings ?? []).map((w) => (
                <p key={w} className="review-warning" data-testid="preflight-warning">
                  ⚠ <Visible text={w} />
                </p>
              ))}
              {a.preview && (
                <pre className="review-preview">
                  <Visible text={a.preview} />
                </pre>
              )}
              {open && (
                <div className="description" data-testid="review-description">
                  <Markdown text={a.description} />
                </div>
              )}
              {dependents.length > 0 && (
                <div className="review-offer" data-testid="hold-offer" role="status">
                  Held, but included actions depend on it: {dependents.map((d) => `#${d}`).join(", ")}.{" "}
                  <button type="button" onClick={() => setHold(dependents, true)}>
                    Also hold its dependents
                  </button>{" "}
                  <button type="button" onClick={() => setHold([a.id], false)}>
                    Approve it too (they need it)
                  </button>
                </div>
              )}
              {heldDeps.length > 0 && (
                <div className="review-offer" data-testid="deps-offer" role="status">
                  Depends on held {heldDeps.map((d) => `#${d}`).join(", ")}.{" "}
                  <button type="button" onClick={() => setHold(heldDeps, false)}>
                    Approve its dependencies too
                  </button>{" "}
                  <button type="button" onClick={() => setHold([a.id], true)}>
                    Hold it too
                  </button>
                </div>
              )}
            </td>
          </tr>
        )}
      </tbody>
    );
  };

  const head = (columns: string[]) => (
    <thead>
      <tr>
        <th />
        <th>#</th>
        <th>Summary</th>
        {columns.map((c) => (
          <th key={c}>
            <Visible text={c} />
          </th>
        ))}
      </tr>
    </thead>
  );
  // Short lists are one table; long ones one fixed-layout table per row, drawn only near the screen.
  const rowsTable = (list: Action[], columns: string[] | null) =>
    list.length <= REVIEW_WINDOW_FROM ? (
      <table className="review-table">
        {columns && head(columns)}
        {list.map((a) => row(a, columns))}
      </table>
    ) : (
      <>
        {columns && <table className="review-table fixed">{head(columns)}</table>}
        <WindowedList
          as="div"
          items={list}
          itemKey={(a) => a.id}
          windowFrom={0}
          estimate={() => REVIEW_ROW_ESTIMATE_PX}
          focusedIndex={list.findIndex((a) => a.id === current)}
          render={(a) => (
            <table key={a.id} className="review-table fixed">
              {row(a, columns)}
            </table>
          )}
        />
      </>
    );

  if (loadError) return <p className="banner error">{loadError}</p>;
  if (!actions) return <p className="muted loading">Loading…</p>;
  return (
    <main className="review" data-testid="review-page">
      <h1>
        Review <span className="muted">{selectionLabel(selection)}</span>{" "}
        <span className="count">{all.length}</span>
      </h1>
      <div className="review-bar" data-testid="review-bar">
        {me.canDecide && (
          <button
            type="button"
            className="primary"
            data-testid="review-approve"
            disabled={busy || included.size === 0}
            onClick={() => void approve()}
          >
            Approve {included.size}
            {held.size > 0 ? ` (hold ${held.size})` : ""}
          </button>
        )}
        <span className="muted"> j/k move · x hold · a approve</span> · <Link to="/">← Inbox</Link>
        {status && (
          <p
            className={status.error ? "review-status error" : "review-status"}
            role={status.error ? "alert" : "status"}
            data-testid="review-status"
          >
            <Visible text={status.text} />
          </p>
        )}
        {!status && blocked.length > 0 && (
          <p className="review-status error" role="alert" data-testid="review-status">
            {blocked.map((a) => `#${a.id}`).join(", ")} depend on held actions: hold them too or approve their
            dependencies.
          </p>
        )}
      </div>
      {all.length === 0 && <p className="muted">Nothing pending here.</p>}
      {risky.length > 0 && (
        <section className="review-group risky" data-testid="review-risky">
          <h2>Needs a careful look ({risky.length})</h2>
          {rowsTable(risky, null)}
        </section>
      )}
      {groups.map((g) => (
        <section
          key={g.key}
          className={`review-group${viewed.has(g.key) ? " viewed" : ""}`}
          data-review-group={g.key}
        >
          <h2>
            <Visible text={g.binding} /> · <Visible text={g.kind || "action"} />{" "}
            <span className="count">{g.actions.length}</span>{" "}
            <label className="review-viewed">
              <input type="checkbox" checked={viewed.has(g.key)} onChange={() => toggleViewed(g.key)} />{" "}
              Viewed
            </label>
          </h2>
          {!viewed.has(g.key) && rowsTable(g.actions, g.columns)}
        </section>
      ))}
      {approved.length > 0 && (
        <section className="review-group" data-testid="review-approved">
          <h2>Decided here</h2>
          <ul className="rows">
            {approved.map((a) => (
              <li key={a.id} data-approved-row={a.id}>
                #{a.id} <Visible text={a.summary || a.title} /> —{" "}
                {a.withdrawnBy ? "approval withdrawn" : a.status}{" "}
                {a.status === "approved" && !a.withdrawnBy && (
                  <button type="button" disabled={busy} onClick={() => void withdraw(a)}>
                    Withdraw
                  </button>
                )}
                {a.status === "applying" && <span className="muted">applying: too late to withdraw</span>}
              </li>
            ))}
          </ul>
        </section>
      )}
      <details className="review-code" data-testid="review-code">
        <summary>Code that made these writes</summary>
        {executionIds.length === 0 && <p className="muted">No execution named.</p>}
        {executionIds.map((id) => {
          const s = snippets.get(id);
          return (
            <div key={id}>
              <h3>
                Execution <code>{id}</code>
              </h3>
              {(!s || s.state === "loading") && <p className="muted">Loading…</p>}
              {s?.state === "absent" && (
                <p className="muted" data-testid="code-unavailable">
                  Not available{s.why ? `: ${s.why}` : "."}
                </p>
              )}
              {s?.state === "ok" && (
                <>
                  {s.snippet.chatMessage && (
                    <p>
                      Asked: <Visible text={s.snippet.chatMessage} />
                    </p>
                  )}
                  <pre className="review-snippet">
                    <Visible text={s.snippet.code} />
                  </pre>
                  {s.snippet.codeTruncated && <p className="muted">(code cut)</p>}
                  <pre className="review-console">
                    <Visible text={s.snippet.console.join("\n")} />
                  </pre>
                  {s.snippet.consoleTruncated && <p className="muted">(console cut)</p>}
                  <p className="muted">
                    {s.snippet.ok ? "ran ok" : `failed: ${s.snippet.error}`} in {s.snippet.durationMs} ms
                  </p>
                </>
              )}
            </div>
          );
        })}
      </details>
    </main>
  );
}
