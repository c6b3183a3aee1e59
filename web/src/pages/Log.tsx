import type { LogResponse } from "@gatehouse/gateway-contract";
import { showInvisible } from "@gatehouse/gateway-contract/invisible";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, useParams } from "react-router-dom";
import { createCoalescer } from "../coalesce.ts";
import { LatchBanner } from "../components/LatchBanner.tsx";
import { LogEntryRow } from "../components/LogEntryRow.tsx";
import { isForbidden, NoAccess } from "../components/NoAccess.tsx";
import { workspacePath } from "../format.ts";
import { entryBinding, entryMatches, type LogFilters } from "../logEntries.ts";
import { useLiveEvents, useSession, useWorkspaceName } from "../session.tsx";

const SLIDER_DEBOUNCE_MS = 150;

/**
 * The workspace's log: a timeline of observations, actions and refusals with filters, and a revision
 * slider that replays the log as of any past revision (`?until=`); "Live" returns to the head.
 */
export function LogPage() {
  const workspaceId = useParams().ws ?? "";
  const { api, reportError } = useSession();
  const workspaceName = useWorkspaceName(workspaceId);
  const [data, setData] = useState<LogResponse | null>(null);
  const [denied, setDenied] = useState(false);
  const [until, setUntil] = useState<number | null>(null);
  const [slider, setSlider] = useState<number | null>(null);
  const [filters, setFilters] = useState<LogFilters>({ kind: "", binding: "", text: "" });
  const sequence = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const untilRef = useRef(until);
  untilRef.current = until;
  const report = useRef(reportError);
  report.current = reportError;

  const load = useCallback(
    async (at: number | null) => {
      const mine = ++sequence.current;
      try {
        const next = await api.log(workspaceId, at ?? undefined);
        if (mine === sequence.current) {
          setData(next);
          setDenied(false);
        }
      } catch (e) {
        if (mine === sequence.current) {
          setDenied(isForbidden(e));
          report.current(e);
        }
      }
    },
    [api, workspaceId],
  );
  const coalescer = useMemo(() => createCoalescer(() => load(untilRef.current)), [load]);

  useEffect(() => {
    void load(until);
  }, [load, until]);
  useEffect(() => () => clearTimeout(timer.current), []);

  useLiveEvents((event) => {
    if (event.type === "open" || event.type === "resync") coalescer.request("log");
    else if (event.type === "notice" && event.notice.workspaceId === workspaceId) coalescer.request("log");
  });

  const bindings = useMemo(() => [...new Set(data?.entries.map(entryBinding) ?? [])].sort(), [data]);
  const entries = useMemo(() => data?.entries.filter((e) => entryMatches(e, filters)) ?? [], [data, filters]);

  if (!data)
    return denied ? (
      <NoAccess workspaceId={workspaceId} />
    ) : (
      <p className="muted">Loading the log of {workspaceId}…</p>
    );

  const head = data.headRevision;
  const value = Math.min(slider ?? until ?? head, head);
  const live = until === null;

  const onSlide = (next: number) => {
    setSlider(next);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setUntil(next >= head ? null : next), SLIDER_DEBOUNCE_MS);
  };
  const goLive = () => {
    clearTimeout(timer.current);
    setSlider(null);
    setUntil(null);
  };

  return (
    <main className="log">
      <nav className="crumbs">
        <Link to="/">Inbox</Link> › <span title={workspaceId}>{workspaceName}</span> › <strong>Log</strong> ·{" "}
        <Link to={workspacePath(workspaceId, "rules")}>Rules</Link> ·{" "}
        <Link to={workspacePath(workspaceId, "chats")}>Chats</Link>
      </nav>
      <h1>Log of {workspaceName}</h1>
      {data.latched && <LatchBanner workspaceName={workspaceName} />}
      <div className="replay">
        <label className="slider">
          <span>
            {live ? "Live" : "Replay"}: as of revision{" "}
            <strong data-testid="log-revision">{data.revision}</strong> of {head}
          </span>
          <input
            type="range"
            data-testid="revision-slider"
            min={0}
            max={head}
            step={1}
            value={value}
            onChange={(e) => onSlide(Number(e.target.value))}
          />
        </label>
        <button
          type="button"
          data-testid="live"
          className={live ? "primary" : ""}
          disabled={live}
          onClick={goLive}
        >
          Live
        </button>
      </div>
      {!live && (
        <div className="banner warn">
          Replaying the log as it was at revision {data.revision}. Statuses shown are those of that moment.
        </div>
      )}
      <div className="filters">
        <label className="filter">
          Kind
          <select
            data-testid="log-filter-kind"
            value={filters.kind}
            onChange={(e) => setFilters({ ...filters, kind: e.target.value as LogFilters["kind"] })}
          >
            <option value="">any</option>
            <option value="observation">observation</option>
            <option value="action">action</option>
            <option value="refusal">refusal</option>
          </select>
        </label>
        <label className="filter">
          Binding
          <select
            data-testid="log-filter-binding"
            value={filters.binding}
            onChange={(e) => setFilters({ ...filters, binding: e.target.value })}
          >
            <option value="">any</option>
            {bindings.map((b) => (
              <option key={b} value={b}>
                {showInvisible(b)}
              </option>
            ))}
          </select>
        </label>
        <label className="filter grow">
          Text
          <input
            type="search"
            data-testid="log-filter-text"
            value={filters.text}
            placeholder="title, description, reason, caller"
            onChange={(e) => setFilters({ ...filters, text: e.target.value })}
          />
        </label>
      </div>
      <p className="muted">
        {entries.length} of {data.entries.length} entries
      </p>
      <ol className="rows timeline">
        {entries.map((entry) => (
          <LogEntryRow key={entry.id} entry={entry} workspaceId={workspaceId} />
        ))}
      </ol>
    </main>
  );
}
