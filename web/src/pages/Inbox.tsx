import type { Action, ConnectionRequest } from "@gatehouse/gateway-contract";
import { showInvisible } from "@gatehouse/gateway-contract/invisible";
import { type ReactNode, useEffect, useMemo, useRef, useState } from "react";
import { Link, useNavigate } from "react-router-dom";
import {
  answered,
  type BatchProgress,
  countNotice,
  finalCount,
  isDone,
  progressText,
  startBatch,
} from "../batchProgress.ts";
import { ActionRow } from "../components/ActionRow.tsx";
import { ConnectionRequestRow } from "../components/ConnectionRequestRow.tsx";
import { LatchBanner } from "../components/LatchBanner.tsx";
import { Visible } from "../components/Visible.tsx";
import { ROW_ESTIMATE_PX, WindowedList } from "../components/WindowedList.tsx";
import { actionPath, callerLabel, shortId, workspacePath } from "../format.ts";
import { countUndecided, flatten, groupByTurn, type InboxFilters, kindKey, matches } from "../inboxGroups.ts";
import { useKeyboard } from "../keyboard.ts";
import { reviewPath } from "../reviewPath.ts";
import { useLiveEvents, useSession } from "../session.tsx";

const keyOf = (a: Action) => `${a.workspaceId}:${a.id}`;
/** The most action ids one approve-batch request takes (the API's limit); more are sent in parts. */
const BATCH_REQUEST_MAX = 1000;
/**
 * A workspace with more pending rows than this draws only the turns near the screen (more than 20
 * turns); with fewer every turn is drawn, so a new row always shows in the page.
 */
const TURNS_WINDOW_FROM_ROWS = 300;
const NO_FILTERS: InboxFilters = { workspace: "", binding: "", kind: "", caller: "" };

/**
 * The inbox: pending actions across the person's workspaces, grouped workspace → turn → binding in
 * submission order, with counts, filters, keyboard navigation (j/k, a, r, x, A, Enter) and, per
 * workspace, the recently decided actions.
 */
export function InboxPage() {
  const { me, api, inbox, reportError, decided, liveUp } = useSession();
  const navigate = useNavigate();
  const [filters, setFilters] = useState<InboxFilters>(NO_FILTERS);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  // Focus follows a row (by key), not a position: when the focused row leaves (approved, rejected),
  // focus moves to the next row that was after it, so a quick key press never lands on a row the
  // person did not look at.
  const [focusKey, setFocusKey] = useState<string | null>(null);
  const previousKeys = useRef<string[]>([]);
  const [rejecting, setRejecting] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [connectionNote, setConnectionNote] = useState("");
  // Batch approvals being followed, one per workspace: counts from the live notices.
  const [batches, setBatches] = useState<BatchProgress[]>([]);
  useLiveEvents((event) => {
    if (event.type === "notice") setBatches((bs) => bs.map((b) => countNotice(b, event.notice)));
  });
  const workspaces = inbox.workspaces;

  const shown = useMemo(
    () =>
      (workspaces ?? [])
        .filter((w) => !filters.workspace || w.id === filters.workspace)
        .map((w) => {
          const turns = groupByTurn(w.pending.filter((a) => matches(a, filters)));
          return {
            workspace: w,
            turns,
            ordered: flatten(turns),
            recent: w.recent.filter((a) => matches(a, filters)),
            pendingById: new Map(w.pending.map((a) => [a.id, a])),
          };
        }),
    [workspaces, filters],
  );
  const options = useMemo(
    () => filterOptions(workspaces?.flatMap((w) => [...w.pending, ...w.recent]) ?? []),
    [workspaces],
  );
  const visible = shown.flatMap((s) => s.ordered);
  const visibleKeys = visible.map(keyOf);
  const indexByKey = new Map(visibleKeys.map((k, i) => [k, i]));
  const focusIndex = resolveFocus(focusKey, indexByKey, previousKeys.current, visible.length);
  const focused = visible[focusIndex];
  const resolvedKey = focused ? keyOf(focused) : null;
  const keysSignature = visibleKeys.join(",");
  useEffect(() => {
    // After each commit: remember the order, and pin focus to the row it resolved to.
    previousKeys.current = keysSignature ? keysSignature.split(",") : [];
    if (focusKey !== null && resolvedKey !== focusKey) setFocusKey(resolvedKey);
  }, [keysSignature, focusKey, resolvedKey]);
  const setFocus = (index: number) => setFocusKey(visibleKeys[index] ?? null);
  const selectedVisible = visible.filter((a) => selected.has(keyOf(a)));
  // Selection is made per workspace; when it spans several, the toolbar names the count in each.
  const selectedCounts = (workspaces ?? [])
    .map((w) => [w.name || w.id, selectedVisible.filter((a) => a.workspaceId === w.id).length] as const)
    .filter(([, n]) => n > 0);
  const selectWorkspace = (ordered: Action[]) => setSelected((s) => new Set([...s, ...ordered.map(keyOf)]));
  const undecidedOf = (a: Action) =>
    countUndecided(a, shown.find((s) => s.workspace.id === a.workspaceId)?.pendingById ?? new Map());

  const focusedKey = focused ? keyOf(focused) : "";
  useEffect(() => {
    if (focusedKey === "") return;
    document.querySelector('[data-focused="true"]')?.scrollIntoView?.({ block: "nearest" });
  }, [focusedKey]);

  async function run(work: () => Promise<void>) {
    setBusy(true);
    try {
      await work();
    } catch (e) {
      reportError(e);
    } finally {
      setBusy(false);
    }
  }

  const approve = (a: Action) =>
    run(async () => {
      const result = await api.approve(a.workspaceId, a.id, { includeDependencies: undecidedOf(a) > 0 });
      decided(result.actions);
    });

  const reject = (a: Action, reason: string) =>
    run(async () => {
      const result = await api.reject(a.workspaceId, a.id, { reason });
      setRejecting(null);
      decided(result.actions);
    });

  const approveSelected = () =>
    run(async () => {
      const byWorkspace = new Map<string, number[]>();
      for (const a of selectedVisible)
        byWorkspace.set(a.workspaceId, [...(byWorkspace.get(a.workspaceId) ?? []), a.id]);
      for (const [workspaceId, actionIds] of byWorkspace) {
        const started = startBatch(workspaceId, actionIds.length);
        setBatches((bs) => [...bs.filter((x) => x.workspaceId !== workspaceId), started]);
        // The answer comes once the approvals are recorded; the outcomes arrive as notices.
        const answers: Action[] = [];
        for (let i = 0; i < actionIds.length; i += BATCH_REQUEST_MAX) {
          const part = actionIds.slice(i, i + BATCH_REQUEST_MAX);
          const result = await api.approveBatch(workspaceId, { actionIds: part, returnOnceRecorded: true });
          answers.push(...result.actions);
          decided(result.actions);
          setSelected((s) => new Set([...s].filter((k) => !part.some((id) => k === `${workspaceId}:${id}`))));
        }
        setBatches((bs) => bs.map((b) => (b.workspaceId === workspaceId ? answered(b, answers) : b)));
      }
    });

  const decideConnection = (
    request: ConnectionRequest,
    accept: { url: string; name: string } | null,
    reason = "",
  ) =>
    run(async () => {
      const { request: r } = accept
        ? await api.acceptConnection(request.workspaceId, request.id, {
            url: accept.url,
            ...(accept.name ? { name: accept.name } : {}),
          })
        : await api.declineConnection(request.workspaceId, request.id, { reason });
      setConnectionNote(
        r.state === "accepted"
          ? `Connected ${r.binding} (${r.acceptedUrl}); the agent sees it as env.${r.binding}.`
          : `Declined connection request ${r.id}.`,
      );
      inbox.refresh(request.workspaceId);
    });

  const toggle = (a: Action) =>
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(keyOf(a))) next.delete(keyOf(a));
      else next.add(keyOf(a));
      return next;
    });

  useKeyboard((key) => {
    if (key === "j") setFocus(Math.min(focusIndex + 1, visible.length - 1));
    else if (key === "k") setFocus(Math.max(focusIndex - 1, 0));
    else if (key === "Enter" && focused) navigate(actionPath(focused.workspaceId, focused.id));
    else if (!me.canDecide || busy) return false;
    else if (key === "a" && focused) void approve(focused);
    else if (key === "r" && focused) setRejecting(keyOf(focused));
    else if (key === "x" && focused) toggle(focused);
    else if (key === "A" && selectedVisible.length > 0) void approveSelected();
    else return false;
    return true;
  });

  if (!workspaces) return <p className="muted">Loading the inbox…</p>;
  const connectionCount = shown.reduce((n, s) => n + (s.workspace.connectionRequests ?? []).length, 0);

  const setFilter = (name: keyof InboxFilters) => (e: { target: { value: string } }) => {
    setFilters({ ...filters, [name]: e.target.value });
    setFocus(0);
  };

  return (
    <main className="inbox">
      <div className="toolbar">
        <h1>
          Inbox{" "}
          <span className="count" data-testid="pending-count">
            {visible.length}
          </span>{" "}
          <span className="muted">pending</span>
          {connectionCount > 0 && (
            <span className="muted" data-testid="connection-count">
              {" "}
              · {connectionCount} connection request{connectionCount === 1 ? "" : "s"}
            </span>
          )}
        </h1>
        <div className="filters">
          <Select label="Workspace" value={filters.workspace} onChange={setFilter("workspace")}>
            {workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </Select>
          <Select label="Binding" value={filters.binding} onChange={setFilter("binding")}>
            {options.bindings.map((b) => (
              <option key={b} value={b}>
                {showInvisible(b)}
              </option>
            ))}
          </Select>
          <Select label="Action kind" value={filters.kind} onChange={setFilter("kind")}>
            {options.kinds.map(([tag, label]) => (
              <option key={tag} value={tag}>
                {showInvisible(label)}
              </option>
            ))}
          </Select>
          <Select label="Caller" value={filters.caller} onChange={setFilter("caller")}>
            {options.callers.map((c) => (
              <option key={c} value={c}>
                {showInvisible(c)}
              </option>
            ))}
          </Select>
        </div>
        {me.canDecide && (
          <div className="buttons">
            <button
              type="button"
              onClick={() => setSelected(new Set())}
              disabled={selectedVisible.length === 0}
            >
              Clear
            </button>
            <button
              type="button"
              className="primary"
              data-testid="approve-selected"
              disabled={selectedVisible.length === 0 || busy}
              onClick={() => void approveSelected()}
            >
              Approve selected ({selectedVisible.length})
            </button>
            {selectedCounts.length > 1 && (
              <span className="muted" data-testid="selected-per-workspace">
                {selectedCounts.map(([name, n]) => `${n} in ${name}`).join(", ")} — one batch per workspace
              </span>
            )}
          </div>
        )}
        <p className="hint">
          Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>Enter</kbd> open
          {me.canDecide && (
            <>
              , <kbd>a</kbd> approve, <kbd>r</kbd> reject, <kbd>x</kbd> select, <kbd>A</kbd> approve selected
            </>
          )}
        </p>
      </div>
      {!liveUp && (
        <div className="banner warn">Reconnecting to live updates — what is shown may be behind.</div>
      )}
      {batches.map((b) => (
        <div
          key={b.workspaceId}
          className="banner info batch-progress"
          role="status"
          data-testid="batch-progress"
          data-workspace={b.workspaceId}
          data-done={isDone(b)}
        >
          <span>
            {isDone(b) ? "Approved" : "Approving"} {b.total} in{" "}
            {workspaces.find((w) => w.id === b.workspaceId)?.name || b.workspaceId}: {progressText(b)}
          </span>
          <progress max={Math.max(b.total, 1)} value={finalCount(b)} />
          {isDone(b) && (
            <button
              type="button"
              className="link"
              aria-label="Dismiss"
              onClick={() => setBatches((bs) => bs.filter((x) => x.workspaceId !== b.workspaceId))}
            >
              ×
            </button>
          )}
        </div>
      ))}
      {connectionNote && (
        <p className="banner info" role="status" data-testid="connection-note">
          <Visible text={connectionNote} />
        </p>
      )}
      {shown.length === 0 && <p className="muted">You can see no workspaces.</p>}
      {shown.map(({ workspace, turns, ordered, recent }) => (
        <section key={workspace.id} className="workspace" data-workspace={workspace.id}>
          <h2>
            {workspace.name} <span className="count">{ordered.length}</span>
            <span className="ws-links">
              {me.canDecide && (
                <button
                  type="button"
                  className="link"
                  data-testid="select-workspace"
                  disabled={ordered.length === 0}
                  onClick={() => selectWorkspace(ordered)}
                >
                  Select all {ordered.length} here
                </button>
              )}
              <Link to={reviewPath(workspace.id)} data-testid="review-link">
                Review
              </Link>
              <Link to={workspacePath(workspace.id, "log")}>Log</Link>
              <Link to={workspacePath(workspace.id, "rules")}>Rules</Link>
              <Link to={workspacePath(workspace.id, "chats")} data-testid="chats-link">
                Chats
              </Link>
            </span>
          </h2>
          {workspace.latched && <LatchBanner workspaceName={workspace.name} />}
          {(workspace.connectionRequests ?? []).length > 0 && (
            <div className="connections" data-testid="connection-requests">
              <h3>
                Connection requests <span className="count">{workspace.connectionRequests.length}</span>
              </h3>
              <ul className="rows">
                {workspace.connectionRequests.map((r) => (
                  <ConnectionRequestRow
                    key={r.id}
                    request={r}
                    decision={
                      me.canDecide
                        ? {
                            onAccept: (url, name) => void decideConnection(r, { url, name }),
                            onDecline: (reason) => void decideConnection(r, null, reason),
                            busy,
                          }
                        : undefined
                    }
                  />
                ))}
              </ul>
            </div>
          )}
          {turns.length === 0 && (workspace.connectionRequests ?? []).length === 0 && (
            <p className="muted">Nothing pending.</p>
          )}
          <WindowedList
            as="div"
            items={turns}
            itemKey={(turn) => turn.executionId}
            windowFrom={ordered.length > TURNS_WINDOW_FROM_ROWS ? 20 : Number.POSITIVE_INFINITY}
            estimate={(turn) => 48 + turn.bindings.length * 32 + turn.count * ROW_ESTIMATE_PX}
            focusedIndex={turns.findIndex((turn) =>
              turn.bindings.some((g) => g.actions.some((a) => keyOf(a) === focusedKey)),
            )}
            render={(turn) => (
              <div key={turn.executionId} className="turn">
                <h3>
                  Turn <code title={turn.executionId}>{shortId(turn.executionId)}</code>{" "}
                  <span className="muted">
                    <Visible text={callerLabel(turn.caller)} />
                  </span>{" "}
                  <span className="count">{turn.count}</span>{" "}
                  <Link
                    to={reviewPath(workspace.id, { kind: "execution", executionId: turn.executionId })}
                    data-testid="review-turn-link"
                  >
                    Review
                  </Link>
                </h3>
                {turn.bindings.map((group) => (
                  <div key={group.binding} className="binding">
                    <h4>
                      <Visible text={group.binding} /> <span className="count">{group.actions.length}</span>
                    </h4>
                    <WindowedList
                      as="ul"
                      windowFrom={50}
                      estimate={() => ROW_ESTIMATE_PX}
                      items={group.actions}
                      itemKey={(a) => a.id}
                      focusedIndex={group.actions.findIndex((a) => keyOf(a) === focusedKey)}
                      render={(a) => {
                        const index = indexByKey.get(keyOf(a)) ?? -1;
                        return (
                          <ActionRow
                            key={a.id}
                            action={a}
                            focused={index === focusIndex}
                            onFocus={() => setFocusKey(keyOf(a))}
                            decision={
                              me.canDecide
                                ? {
                                    selected: selected.has(keyOf(a)),
                                    onToggleSelect: () => toggle(a),
                                    undecided: undecidedOf(a),
                                    onApprove: () => void approve(a),
                                    rejecting: rejecting === keyOf(a),
                                    onRejectOpen: () => setRejecting(keyOf(a)),
                                    onRejectCancel: () => setRejecting(null),
                                    onRejectConfirm: (reason) => void reject(a, reason),
                                    busy,
                                  }
                                : undefined
                            }
                          />
                        );
                      }}
                    />
                  </div>
                ))}
              </div>
            )}
          />
          {recent.length > 0 && (
            <details className="recent" open>
              <summary>Recently decided ({recent.length})</summary>
              <ul className="rows">
                {recent.map((a) => (
                  <ActionRow key={a.id} action={a} />
                ))}
              </ul>
            </details>
          )}
        </section>
      ))}
    </main>
  );
}

/**
 * The index to focus: the focused row's, or — when it left the list — the first row that followed it
 * before and is still shown, else the last row; 0 when nothing was focused.
 */
function resolveFocus(
  key: string | null,
  indexByKey: ReadonlyMap<string, number>,
  previous: readonly string[],
  length: number,
): number {
  if (length === 0 || key === null) return 0;
  const now = indexByKey.get(key);
  if (now !== undefined) return now;
  const before = previous.indexOf(key);
  for (let i = before + 1; before >= 0 && i < previous.length; i++) {
    const next = indexByKey.get(previous[i] as string);
    if (next !== undefined) return next;
  }
  return length - 1;
}

function Select({
  label,
  value,
  onChange,
  children,
}: {
  label: string;
  value: string;
  onChange: (e: { target: { value: string } }) => void;
  children: ReactNode;
}) {
  return (
    <label className="filter">
      {label}
      <select
        value={value}
        onChange={onChange}
        data-testid={`filter-${label.toLowerCase().replace(" ", "-")}`}
      >
        <option value="">any</option>
        {children}
      </select>
    </label>
  );
}

function filterOptions(actions: Action[]) {
  const bindings = new Set<string>();
  const kinds = new Map<string, string>();
  const callers = new Set<string>();
  for (const a of actions) {
    bindings.add(a.binding);
    if (a.actionKind) kinds.set(kindKey(a), a.actionKind.label);
    callers.add(callerLabel(a.caller));
  }
  return {
    bindings: [...bindings].sort(),
    kinds: [...kinds].sort((x, y) => x[1].localeCompare(y[1])),
    callers: [...callers].sort(),
  };
}
