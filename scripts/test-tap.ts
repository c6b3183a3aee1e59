/**
 * Reads the TAP that `node --test` prints (its default reporter when stdout is not a terminal) into the
 * numbers the test command's summary needs: counts, known gaps (TODO tests), failures with their
 * diagnostics, and each top-level test's duration.
 *
 * Only what node's reporter writes is recognised: a top-level test is an `ok N - name` / `not ok N - name`
 * line at column 0, followed by its YAML block (`  ---` … `  ...`) holding `duration_ms`; nested tests are
 * the same, indented by 4 per level; each `node --test` run ends with `# pass N`, `# fail N`, `# todo N`.
 * A unit that runs node --test more than once (e.g. a tsc step then tests) has its counts summed.
 */

/** One failing test: its name (with its parents, " > "-separated) and up to 40 lines of its diagnostic. */
export interface TapFailure {
  name: string;
  diagnostic: string[];
}

/** A top-level test and how long it ran, in milliseconds (node's own `duration_ms`). */
export interface TapDuration {
  name: string;
  ms: number;
}

/** What one unit's TAP output says. */
export interface TapSummary {
  pass: number;
  fail: number;
  todo: number;
  /** Names of tests marked TODO that failed: known gaps, shown in the summary but not failures. */
  todoNames: string[];
  failures: TapFailure[];
  /** Top-level tests (and suites) with their durations, in output order. */
  durations: TapDuration[];
}

const TEST_LINE = /^( *)(not ok|ok) \d+ - (.*)$/;
const DIRECTIVE = / # (TODO|SKIP)\b/;
const MAX_DIAGNOSTIC_LINES = 40;

/**
 * Summarises one unit's TAP output.
 * @param text the whole output (stdout and stderr interleaved is fine: non-TAP lines are ignored)
 * @returns counts (0 when a count line is missing: the caller decides what a crash without counts means)
 */
export function summarizeTap(text: string): TapSummary {
  const summary: TapSummary = { pass: 0, fail: 0, todo: 0, todoNames: [], failures: [], durations: [] };
  const lines = text.split("\n");
  // The names of the tests enclosing the current line, by indent level: node prints a subtest's
  // "# Subtest: name" before its children and its "ok" line after them.
  const open: string[] = [];
  let lastTopLevel: string | undefined;
  let failing: TapFailure | undefined;
  for (const line of lines) {
    const count = /^# (pass|fail|todo) (\d+)$/.exec(line);
    if (count) {
      const [, kind = "pass", n = "0"] = count;
      summary[kind as "pass" | "fail" | "todo"] += Number(n);
      continue;
    }
    const subtest = /^( *)# Subtest: (.*)$/.exec(line);
    if (subtest) {
      const [, indent = "", name = ""] = subtest;
      open[indent.length / 4] = name;
      open.length = indent.length / 4 + 1;
      continue;
    }
    const t = TEST_LINE.exec(line);
    if (t) {
      const [, indent = "", status, name = ""] = t;
      failing = undefined;
      const depth = indent.length / 4;
      lastTopLevel = depth === 0 ? name.replace(/ #.*$/, "") : undefined;
      const directive = DIRECTIVE.exec(name);
      if (status === "not ok" && directive?.[1] === "TODO") summary.todoNames.push(name);
      else if (status === "not ok" && !directive) {
        const parents = open.slice(0, depth).filter(Boolean);
        failing = { name: [...parents, name].join(" > "), diagnostic: [] };
        summary.failures.push(failing);
      }
      continue;
    }
    if (failing) {
      if (/^ *\.\.\.$/.test(line)) failing = undefined;
      else if (!/^ *---$/.test(line) && failing.diagnostic.length < MAX_DIAGNOSTIC_LINES)
        failing.diagnostic.push(line);
    }
    const d = /^ {2}duration_ms: ([\d.]+)$/.exec(line);
    if (d && lastTopLevel !== undefined) {
      summary.durations.push({ name: lastTopLevel, ms: Number(d[1]) });
      lastTopLevel = undefined;
    }
  }
  return summary;
}
