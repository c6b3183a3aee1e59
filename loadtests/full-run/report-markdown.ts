/** The full run's report as Markdown tables (what docs/slo.md records), one per phase. */

interface LevelJson {
  level: number;
  figures: Record<string, number>;
  broken: string[];
  cpu: { processes: Record<string, number>; load1: number };
}
interface PhaseJson {
  levels: LevelJson[];
  sustained: number | null;
  knee: number | null;
  kneeBroke: string[];
  busiestAtKnee: { process: string; cpuPercentOfOneCore: number } | null;
}

/** A column: its header and how to read it from a level. */
type Column = [string, (l: LevelJson) => string | number];

const cpu = (name: string): Column => [`${name} CPU %`, (l) => l.cpu.processes[name] ?? 0];
const COMMON_TAIL: Column[] = [
  ["load (1 min)", (l) => l.cpu.load1],
  cpu("gatehouse dev"),
  cpu("Temporal dev server"),
  cpu("gVisor sandboxes"),
  cpu("test harness"),
  ["SLO", (l) => (l.broken.length ? `✗ ${l.broken.join("; ")}` : "✓")],
];

const COLUMNS: Record<string, Column[]> = {
  agents: [
    ["snippets/s offered", (l) => l.figures.offeredPerS ?? ""],
    ["done/s", (l) => l.figures.donePerS ?? ""],
    ["p50 ms", (l) => l.figures.p50 ?? ""],
    ["p95 ms", (l) => l.figures.p95 ?? ""],
    ["p99 ms", (l) => l.figures.p99 ?? ""],
    ["ok %", (l) => l.figures.okRate ?? ""],
    ["dropped", (l) => l.figures.dropped ?? ""],
    ...COMMON_TAIL,
  ],
  approvers: [
    ["approvers", (l) => l.figures.approvers ?? ""],
    ["batches/s", (l) => l.figures.batchesPerS ?? ""],
    ["inbox p95 ms", (l) => l.figures.inboxP95 ?? ""],
    ["detail p95 ms", (l) => l.figures.detailP95 ?? ""],
    ["approve-batch p95 ms", (l) => l.figures.approveBatchP95 ?? ""],
    [
      "approve → applied p50 / p99 (n)",
      (l) =>
        `${l.figures.approveToAppliedP50} / ${l.figures.approveToAppliedP99} (${l.figures.approveToAppliedN})`,
    ],
    ...COMMON_TAIL,
  ],
  webSessions: [
    ["sessions", (l) => l.figures.sessions ?? ""],
    ["page load p95 ms", (l) => l.figures.pageLoadP95 ?? ""],
    ["streams held %", (l) => l.figures.sseHeldRate ?? ""],
    ["API failures %", (l) => l.figures.apiFailedRate ?? ""],
    ...COMMON_TAIL,
  ],
};

/** One phase's table, headed by its sustained level and knee. */
export function phaseMarkdown(key: string, p: PhaseJson): string {
  const cols = COLUMNS[key] ?? [];
  const rows = [
    cols.map((c) => c[0]),
    cols.map(() => "---"),
    ...p.levels.map((l) => cols.map((c) => String(c[1](l)))),
  ];
  return [
    `### ${key}: sustained ${p.sustained ?? "none"}, knee ${p.knee ?? "not reached"}`,
    "",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
    "",
    `Busiest process at the knee: ${p.busiestAtKnee ? `${p.busiestAtKnee.process}, ${p.busiestAtKnee.cpuPercentOfOneCore}% of a core` : "—"}.`,
  ].join("\n");
}
