/**
 * The services' error messages name gRPC fields and RPCs ("reason: …; set reason", "list actions
 * with ListActions"), which is right for API callers; on the command line people know flags,
 * arguments and commands. `cliWording` rewrites those names, in this one place, for every service
 * error a command prints (see `describeGrpcError`).
 */
import ms from "ms";

/** A request field → what a CLI user gives instead (a flag, an argument, or a variable). */
const FIELDS: Record<string, string> = {
  workspace_id: "<workspace>",
  action_id: "<id>",
  action_ids: "<ids>",
  include_dependencies: "--with-deps",
  reason: "--reason",
  action_kind_tag: "<action-kind-tag>",
  binding: "<binding>",
  requested_by: "--by",
  added_by: "--by",
  removed_by: "--by",
  decided_by: "GATEHOUSE_USER",
  set_by: "GATEHOUSE_USER",
  until_revision: "--until",
  turn_id: "<turn-id>",
  url: "<url>",
  name: "--name",
  code: "<file>",
  observer: "<person>",
  credentials: "--credential-file",
  "limits.wall_time_ms": "--timeout",
  "limits.wallTimeMs": "--timeout",
};

/** An RPC → the command that calls it (one-word RPC names are left alone: they read as prose). */
const RPCS: Record<string, string> = {
  ListActions: "gatehouse actions <workspace>",
  ApproveBatch: "gatehouse approve",
  RequestRevert: "gatehouse revert",
  SetAutoApprovalRule: "gatehouse rule",
  GetLog: "gatehouse log <workspace>",
  CreateWorkspace: "gatehouse workspace create",
  ListWorkspaces: "gatehouse workspace list",
  IntroduceResource: "gatehouse connect",
  DescribeBindings: "gatehouse bindings <workspace>",
  RemoveBinding: "gatehouse disconnect",
  ExecuteCode: "gatehouse exec",
  GetTurn: "gatehouse turn",
  AddObserver: "gatehouse observer add",
};

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const fieldNames = Object.keys(FIELDS)
  .sort((a, b) => b.length - a.length)
  .map(escapeRegExp)
  .join("|");
const rpcNames = Object.keys(RPCS)
  .sort((a, b) => b.length - a.length)
  .join("|");

/**
 * A limit in milliseconds as a duration flag takes it (`ms`'s short form when it is exact): 300000 →
 * "5m", 1000 → "1s"; 1500 → "1500ms" (not "2s").
 */
export function formatDuration(millis: number): string {
  const short = ms(millis);
  return ms(short as ms.StringValue) === millis ? short : `${millis}ms`;
}

/** "pass --reason", "give <id>", "set GATEHOUSE_USER": the verb that fits what is given. */
function give(cli: string): string {
  if (cli.startsWith("--")) return `pass ${cli}`;
  if (cli.startsWith("<")) return `give ${cli}`;
  return `set ${cli}`;
}

/**
 * Rewrites gRPC field and RPC names in a service's error message into the CLI's flags, arguments
 * and commands: "reason: a rejection needs a reason …; set reason" → "--reason: a rejection needs a
 * reason …; pass --reason"; "list actions with ListActions (CLI: gatehouse actions <workspace>)" →
 * "list actions with `gatehouse actions <workspace>`". Prose is left alone: a plain word such as
 * "reason" is only rewritten where it names the field (the message's leading "field:" or
 * "field is/must/has", or after "set"); snake_case names are rewritten everywhere.
 */
export function cliWording(message: string): string {
  let m = message;
  // "set X (CLI: cmd)" / "with X (CLI: cmd)": the service already said what the CLI does.
  m = m.replace(/\b(set|with) [A-Za-z_.]+ \(CLI: ([^)]+)\)/g, (_, verb: string, cmd: string) =>
    verb === "set" ? `use \`${cmd}\`` : `with \`${cmd}\``,
  );
  m = m.replace(/ \(CLI: ([^)]+)\)/g, " (`$1`)");
  // The wall-time limit is in ms on the wire; --timeout takes a duration with a unit.
  m = m.replace(
    /\blimits\.wall_?[tT]ime_?[mM]s must be at most (\d+)\b/,
    (_, max: string) => `--timeout must be at most ${formatDuration(Number(max))}`,
  );
  // The leading field of "field: fix" or "field is required / must be …".
  m = m.replace(new RegExp(`^(${fieldNames})(?=: | is | must | has | name )`), (f: string) => FIELDS[f] ?? f);
  // "set reason" → "pass --reason".
  m = m.replace(new RegExp(`\\bset (${fieldNames})\\b(?![\\w.])`, "g"), (_, f: string) =>
    give(FIELDS[f] ?? f),
  );
  // snake_case and dotted field names are never prose.
  m = m.replace(new RegExp(`(?<![\\w<-])(${fieldNames})(?![\\w>])`, "g"), (f: string) =>
    /[_.]/.test(f) ? (FIELDS[f] ?? f) : f,
  );
  // RPC names.
  m = m.replace(new RegExp(`\\b(${rpcNames})\\b`, "g"), (r: string) => `\`${RPCS[r] ?? r}\``);
  return m;
}
