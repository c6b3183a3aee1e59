import type { ActionDetail } from "@gatehouse/gateway-contract";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, useParams } from "react-router-dom";
import { createCoalescer } from "../coalesce.ts";
import { ActionGlance } from "../components/ActionGlance.tsx";
import { ChatOwner } from "../components/ChatOwner.tsx";
import { DepsGraph } from "../components/DepsGraph.tsx";
import { isForbidden, NoAccess } from "../components/NoAccess.tsx";
import { RejectForm } from "../components/RejectForm.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Visible } from "../components/Visible.tsx";
import { callerLabel, formatResult, formatTime, shortId, workspacePath } from "../format.ts";
import { Markdown } from "../markdown.tsx";
import { useLiveEvents, useSession, useWorkspaceName } from "../session.tsx";

/**
 * One action in full: its exact description (inert Markdown), facts, decision controls, its
 * dependencies and dependents as a small graph, and what the agent read before it. Re-read on
 * notices of its workspace and on every (re)open of the event stream.
 */
export function ActionDetailPage() {
  const params = useParams();
  const workspaceId = params.ws ?? "";
  const actionId = Number(params.id);
  const { me, api, reportError, decided, observed } = useSession();
  const workspaceName = useWorkspaceName(workspaceId);
  const [detail, setDetail] = useState<ActionDetail | null>(null);
  const [denied, setDenied] = useState(false);
  const [rejecting, setRejecting] = useState(false);
  const [busy, setBusy] = useState(false);
  const latest = useRef({ observed, reportError });
  latest.current = { observed, reportError };

  const coalescer = useMemo(
    () =>
      createCoalescer(async () => {
        try {
          const next = await api.action(workspaceId, actionId);
          setDetail(next);
          setDenied(false);
          latest.current.observed([next.action, ...next.dependencies, ...next.dependents]);
        } catch (e) {
          setDenied(isForbidden(e));
          latest.current.reportError(e);
        }
      }),
    [api, workspaceId, actionId],
  );
  const reload = useCallback(() => coalescer.request("detail"), [coalescer]);

  useEffect(() => {
    setDetail(null);
    setRejecting(false);
    reload();
  }, [reload]);

  useLiveEvents((event) => {
    if (event.type === "open" || event.type === "resync") reload();
    else if (event.type === "notice" && event.notice.workspaceId === workspaceId) {
      if (!detail || event.notice.revision > detail.revision) reload();
    }
  });

  if (!Number.isInteger(actionId) || actionId <= 0) return <p>Not an action id: {params.id}</p>;
  if (!detail)
    return denied ? (
      <NoAccess workspaceId={workspaceId} />
    ) : (
      <p className="muted">Loading action #{actionId}…</p>
    );

  const { action, undecidedDependencies } = detail;
  const pending = action.status === "pending";

  async function run(work: () => Promise<void>) {
    setBusy(true);
    try {
      await work();
    } catch (e) {
      reportError(e);
    } finally {
      setBusy(false);
      reload();
    }
  }
  const approve = () =>
    run(async () => {
      const result = await api.approve(workspaceId, actionId, {
        includeDependencies: undecidedDependencies.length > 0,
      });
      decided(result.actions);
    });
  const reject = (reason: string) =>
    run(async () => {
      const result = await api.reject(workspaceId, actionId, { reason });
      setRejecting(false);
      decided(result.actions);
    });

  return (
    <main className="detail">
      <nav className="crumbs">
        <Link to="/">Inbox</Link> › <span title={workspaceId}>{workspaceName}</span> ›{" "}
        <Link to={workspacePath(workspaceId, "log")}>Log</Link> ·{" "}
        <Link to={workspacePath(workspaceId, "rules")}>Rules</Link>
      </nav>
      <h1>
        <span className="row-id">#{action.id}</span>{" "}
        <span data-testid="title">{action.title ? <Visible text={action.title} /> : "(untitled)"}</span>{" "}
        <StatusBadge status={action.status} testId="status" />
      </h1>
      <ActionGlance action={action} />

      {!action.descriptionIsComplete && (
        <div className="banner warn strong" data-testid="incomplete" role="alert">
          <strong>Incomplete description.</strong> It was cut to its size bound: you are not seeing everything
          this action will do. Approve only if what is shown is enough.
        </div>
      )}
      {action.outcomeUnknown && (
        <div className="banner warn">
          Outcome unknown: a crash interrupted applying this action; nobody knows whether it reached the
          external system.
        </div>
      )}

      {pending && me.canDecide && (
        <div className="decide buttons">
          <button type="button" className="primary" data-testid="approve" disabled={busy} onClick={approve}>
            {undecidedDependencies.length > 0
              ? `Approve with ${undecidedDependencies.length} earlier`
              : "Approve"}
          </button>
          <button type="button" data-testid="reject" disabled={busy} onClick={() => setRejecting(true)}>
            Reject…
          </button>
          {undecidedDependencies.length > 0 && (
            <span className="muted">
              Also approves, first: {undecidedDependencies.map((id) => `#${id}`).join(", ")}
            </span>
          )}
        </div>
      )}
      {pending && me.canDecide && rejecting && (
        <RejectForm busy={busy} onConfirm={reject} onCancel={() => setRejecting(false)} />
      )}

      {action.reason && (
        <div className={`reason reason-${action.status}`}>
          <span className="label">{action.status === "failed" ? "Failure" : "Reason"}:</span>{" "}
          <span data-testid="reason">
            <Visible text={action.reason} />
          </span>
          {action.cascadedFrom > 0 && (
            <>
              {" "}
              (cascaded from{" "}
              <Link to={`/ws/${encodeURIComponent(workspaceId)}/actions/${action.cascadedFrom}`}>
                #{action.cascadedFrom}
              </Link>
              )
            </>
          )}
        </div>
      )}

      <dl className="facts">
        <dt>Binding</dt>
        <dd>
          <Visible text={action.binding} />
        </dd>
        <dt>Action kind</dt>
        <dd>
          {action.actionKind ? (
            <>
              <Visible text={action.actionKind.label} />{" "}
              <code>
                <Visible text={action.actionKind.tag} />
              </code>
            </>
          ) : (
            <span className="muted">unclassified (never auto-approved)</span>
          )}
        </dd>
        <dt>Caller</dt>
        <dd data-testid="caller">
          <Visible text={callerLabel(action.caller)} />
          <ChatOwner startedBy={action.chatStartedBy} />
        </dd>
        <dt>Turn</dt>
        <dd>
          <code title={action.executionId}>{shortId(action.executionId)}</code> (the agent was given the
          provisional id{" "}
          <code>
            <Visible text={action.localId} />
          </code>
          )
        </dd>
        <dt>Delivery</dt>
        <dd>{action.delivery}</dd>
        <dt>Egress</dt>
        <dd>{action.egress ? <span className="flag egress">sends data out of the company</span> : "no"}</dd>
        <dt>Submitted</dt>
        <dd>{formatTime(action.submittedAt)}</dd>
        {action.decidedBy && (
          <>
            <dt>Decided by</dt>
            <dd>
              <Visible text={action.decidedBy} />{" "}
              <span className="muted">{formatTime(action.decidedAt)}</span>
            </dd>
          </>
        )}
        {action.implementsRevert > 0 && (
          <>
            <dt>Reverts</dt>
            <dd>
              <Link to={`/ws/${encodeURIComponent(workspaceId)}/actions/${action.implementsRevert}`}>
                #{action.implementsRevert}
              </Link>
            </dd>
          </>
        )}
        <dt>Revision</dt>
        <dd>{action.lastRevision}</dd>
      </dl>

      <section>
        <h2>Description</h2>
        <div className="description" data-testid="description">
          <Markdown text={action.description} />
        </div>
      </section>

      {action.status === "applied" && action.resultJson && (
        <section>
          <h2>Result</h2>
          <pre className="result">
            <Visible text={formatResult(action.resultJson)} />
          </pre>
        </section>
      )}

      <section>
        <h2>Dependencies</h2>
        <div className="deps-graph-scroll">
          <DepsGraph action={action} dependencies={detail.dependencies} dependents={detail.dependents} />
        </div>
      </section>

      <section>
        <h2>What the agent read before this</h2>
        <ul className="read-before" data-testid="read-before">
          {detail.readBefore.map((o) => (
            <li key={o.id} data-observation-id={o.id}>
              <span className="row-id">#{o.id}</span>{" "}
              <span>
                <Visible text={o.binding} />
              </span>{" "}
              <code>
                <Visible text={o.kind} />
              </code>{" "}
              <span>
                <Visible text={o.title} />
              </span>
              {o.page > 0 && <span className="muted"> page {o.page}</span>}
              {o.containsRestrictedData && <span className="flag restricted">restricted</span>}
            </li>
          ))}
        </ul>
        {detail.readBefore.length === 0 && <p className="muted">Nothing was read in this turn before it.</p>}
      </section>
    </main>
  );
}
