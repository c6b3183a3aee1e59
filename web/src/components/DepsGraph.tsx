import type { Action } from "@gatehouse/gateway-contract";
import { showInvisible } from "@gatehouse/gateway-contract/invisible";
import { actionPath } from "../format.ts";

const COLUMN_X = [0, 250, 500] as const;
const NODE_W = 220;
const NODE_H = 30;
const GAP = 10;
const TOP = 26;

function label(action: Action): string {
  const text = `#${action.id} ${showInvisible(action.title)}`;
  return text.length > 30 ? `${text.slice(0, 29)}…` : text;
}

function Node({ action, x, y, current }: { action: Action; x: number; y: number; current?: boolean }) {
  const body = (
    <>
      <title>{`#${action.id} ${showInvisible(action.title)} (${action.status})`}</title>
      <rect
        x={x}
        y={y}
        width={NODE_W}
        height={NODE_H}
        rx={6}
        className={`node status-${action.status}${current ? " node-current" : ""}`}
      />
      <text x={x + 10} y={y + NODE_H / 2 + 5} className="node-text">
        {label(action)}
      </text>
    </>
  );
  if (current) return <g data-node-id={action.id}>{body}</g>;
  return (
    <a href={`#${actionPath(action.workspaceId, action.id)}`} data-node-id={action.id}>
      {body}
    </a>
  );
}

/**
 * The action's direct dependencies and dependents as a three-column SVG
 * (dependencies → this → dependents); nodes are coloured by status and link to their detail pages.
 */
export function DepsGraph({
  action,
  dependencies,
  dependents,
}: {
  action: Action;
  dependencies: Action[];
  dependents: Action[];
}) {
  const rows = Math.max(dependencies.length, dependents.length, 1);
  const height = TOP + rows * (NODE_H + GAP);
  const yAt = (index: number, count: number) =>
    TOP + ((rows - count) * (NODE_H + GAP)) / 2 + index * (NODE_H + GAP);
  const centerY = yAt(0, 1);
  const mid = (y: number) => y + NODE_H / 2;
  return (
    <svg
      data-testid="deps-graph"
      className="deps-graph"
      viewBox={`0 0 ${COLUMN_X[2] + NODE_W} ${height}`}
      role="img"
      aria-labelledby="deps-graph-title"
    >
      <title id="deps-graph-title">
        {`Action #${action.id} depends on ${dependencies.length} and is needed by ${dependents.length}`}
      </title>
      <text x={COLUMN_X[0]} y={14} className="col-head">
        {dependencies.length ? "depends on" : "depends on nothing"}
      </text>
      <text x={COLUMN_X[1]} y={14} className="col-head">
        this action
      </text>
      <text x={COLUMN_X[2]} y={14} className="col-head">
        {dependents.length ? "needed by" : "needed by nothing"}
      </text>
      {dependencies.map((d, i) => (
        <line
          key={`l${d.id}`}
          className="edge"
          x1={COLUMN_X[0] + NODE_W}
          y1={mid(yAt(i, dependencies.length))}
          x2={COLUMN_X[1]}
          y2={mid(centerY)}
        />
      ))}
      {dependents.map((d, i) => (
        <line
          key={`r${d.id}`}
          className="edge"
          x1={COLUMN_X[1] + NODE_W}
          y1={mid(centerY)}
          x2={COLUMN_X[2]}
          y2={mid(yAt(i, dependents.length))}
        />
      ))}
      {dependencies.map((d, i) => (
        <Node key={`d${d.id}`} action={d} x={COLUMN_X[0]} y={yAt(i, dependencies.length)} />
      ))}
      <Node action={action} x={COLUMN_X[1]} y={centerY} current />
      {dependents.map((d, i) => (
        <Node key={`t${d.id}`} action={d} x={COLUMN_X[2]} y={yAt(i, dependents.length)} />
      ))}
    </svg>
  );
}
