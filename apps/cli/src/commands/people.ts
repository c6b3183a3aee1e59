/** Commands for people deciding and auditing: actions, approve, reject, revert, rules, log, replay, verify. */
import {
  ActionRecord,
  ActionStatus,
  LogView,
  RequestRevertResponse,
  type VerifyResponse,
} from "@gatehouse/proto";
import type { Command } from "commander";
import { call, decisionsClient } from "../clients.ts";
import { gatewayApprove, gatewayPendingIds, gatewayRequest, gatewayTarget } from "../gateway.ts";
import { actionsTable, emit, logTable, verifyText } from "../output.ts";
import { showText } from "../show-text.ts";
import { approveBatch, approveNoWait, parseState, STATE_NAMES } from "./approve-batch.ts";
import { personArg } from "./members.ts";
import { type GlobalOptions, parseDuration, parseId, run, who } from "./shared.ts";

export function registerPeopleCommands(program: Command, globals: () => GlobalOptions): void {
  program
    .command("actions <workspace>")
    .description("list the workspace's actions (the action-log projection)")
    .option("--pending", "only pending actions (same as --state pending)")
    .option(
      "--state <status>",
      `only actions in this state: ${STATE_NAMES.join(", ")}; repeat for several (--state approved --state applying)`,
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .action((ws: string, opts: { pending?: boolean; state?: string[] }) =>
      run("approval", async () => {
        const states = new Set((opts.state ?? []).map(parseState));
        if (opts.pending) states.add(ActionStatus.ACTION_STATUS_PENDING);
        const pendingOnly = states.size === 1 && states.has(ActionStatus.ACTION_STATUS_PENDING);
        const c = decisionsClient();
        const res = await call(c, c.listActions, { workspaceId: ws, pendingOnly });
        const actions = states.size ? res.actions.filter((a) => states.has(a.status)) : res.actions;
        emit(
          globals().json,
          actions.map((a) => ActionRecord.toJSON(a)),
          () => actionsTable(actions),
        );
      }),
    );

  program
    .command("approve <workspace> [ids...]")
    .description(
      "approve actions (applied in submission order); --all approves every pending one. The command follows them until every action is applied, failed or rejected. A batch (several ids, --all) shows its progress on stdout: a bar on a terminal, a line every 5 s in a pipe, JSON lines and a summary with --json. One id shows its progress on stderr and then the final records of the action, its dependencies and any cascade (a table, or a JSON array with --json). Exit code 1 when an action failed or its outcome is unknown, or nothing happened for --stall-timeout; 130 on Ctrl-C (the approvals stay recorded and go on applying: follow them with `gatehouse actions <workspace> --state approved --state applying`); --no-wait returns once they are recorded. It shows no descriptions, so its approvals are not bound to one; `gatehouse review` binds each approval to the description it showed",
    )
    .option("--all", "approve every pending action of the workspace")
    .option("--with-deps", "also approve the undecided actions these depend on (one id)")
    .option("--by <person>", 'who decides, "user:<id>" (default: user:$GATEHOUSE_USER or user:$USER)')
    .option(
      "--no-wait",
      "record the approvals and return without following the applies (prints the approved records; follow them later with `gatehouse actions <workspace> --state approved --state applying`)",
    )
    .option(
      "--stall-timeout <duration>",
      "give up following the approved actions when nothing happened to them for this long, e.g. 30s, 10m (the approvals stay recorded)",
      "2m",
    )
    .action(
      (
        ws: string,
        ids: string[],
        opts: { all?: boolean; withDeps?: boolean; wait: boolean; stallTimeout: string; by?: string },
      ) =>
        run("approval", async () => {
          if (opts.all && ids.length) throw new Error("give either action ids or --all, not both");
          if (!opts.all && !ids.length) throw new Error("give the ids of the actions to approve, or --all");
          const actionIds = ids.map((s) => parseId(s, "action id"));
          const stallMs = parseDuration(opts.stallTimeout, "--stall-timeout");
          if (opts.withDeps && actionIds.length !== 1) {
            throw new Error("--with-deps takes one action id (approve its undecided dependencies with it)");
          }
          const gateway = gatewayTarget();
          if (gateway) {
            // Through the gateway the token's person decides: no --by, no dependency walk.
            if (opts.by) throw new Error("--by: through the gateway the token's person decides; drop --by");
            if (opts.withDeps)
              throw new Error(
                "--with-deps is not available through the gateway: list the ids, dependencies first",
              );
            const targets = opts.all ? await gatewayPendingIds(gateway, ws) : actionIds;
            if (targets.length === 0) throw new Error(`no pending actions in ${ws}`);
            const final = await gatewayApprove(gateway, ws, targets, opts.wait, stallMs);
            emit(globals().json, final, () =>
              final.map((a) => `#${a.id}\t${a.status}\t${a.binding}\t${a.title}`).join("\n"),
            );
            if (final.some((a) => a.status === "failed")) process.exitCode = 1;
            return;
          }
          const decidedBy = personArg(opts.by ?? who("--by"), "--by");
          const c = decisionsClient();
          // No description digests: this command shows no description, so it cannot say which one
          // the person saw (`gatehouse review` does, and sends them).
          if (!opts.wait) {
            await approveNoWait(
              c,
              ws,
              actionIds,
              !!opts.all,
              globals().json,
              decidedBy,
              !!opts.withDeps,
            ).catch((err) => {
              throw withDepsCommand(err, ws);
            });
            return;
          }
          // One id: followed like a batch (exit codes included), its progress on stderr and its
          // final records on stdout as this form always printed them.
          const single = actionIds.length === 1 ? { includeDependencies: !!opts.withDeps } : undefined;
          await approveBatch(c, ws, actionIds, !!opts.all, stallMs, globals().json, decidedBy, single).catch(
            (err) => {
              throw withDepsCommand(err, ws);
            },
          );
        }),
    );

  program
    .command("show <workspace> <id>")
    .description(
      "one action's full description: summary, risks, warnings, fields, text, dependencies, digest",
    )
    .action((ws: string, id: string) =>
      run("approval", async () => {
        const actionId = parseId(id, "action id");
        const c = decisionsClient();
        const { actions } = await call(c, c.listActions, { workspaceId: ws, pendingOnly: false });
        const action = actions.find((a) => a.id === actionId);
        if (!action)
          throw new Error(`no action ${actionId} in ${ws}; list them with \`gatehouse actions ${ws}\``);
        emit(globals().json, ActionRecord.toJSON(action), () => showText(action, actions));
      }),
    );

  program
    .command("withdraw <workspace> <ids...>")
    .description(
      "withdraw approvals not yet claimed for apply; the actions go back to pending, with the approved actions that depend on them",
    )
    .option("--reason <text>", "why (recorded with the withdrawal)", "")
    .option("--by <person>", 'who withdraws, "user:<id>" (default: user:$GATEHOUSE_USER or user:$USER)')
    .action((ws: string, ids: string[], opts: { reason: string; by?: string }) =>
      run("approval", async () => {
        const withdrawnBy = personArg(opts.by ?? who("--by"), "--by");
        const actionIds = ids.map((s) => parseId(s, "action id"));
        const c = decisionsClient();
        const res = await call(c, c.withdrawApproval, {
          workspaceId: ws,
          actionIds,
          withdrawnBy,
          reason: opts.reason,
        });
        emit(
          globals().json,
          res.actions.map((a) => ActionRecord.toJSON(a)),
          () => {
            const asked = new Set(actionIds);
            const dependents = res.actions.filter((a) => !asked.has(a.id)).map((a) => `#${a.id}`);
            const head = `withdrew ${res.actions.length} approval${res.actions.length === 1 ? "" : "s"} in ${ws}${dependents.length ? ` (dependents with them: ${dependents.join(", ")})` : ""}; they are pending again`;
            return `${head}\n${actionsTable(res.actions)}`;
          },
        );
      }),
    );

  program
    .command("reject <workspace> <id>")
    .description("reject an action; actions that depend on it are rejected too")
    .requiredOption("--reason <text>", "why (shown to the agent and in the log)")
    .option("--by <person>", 'who decides, "user:<id>" (default: user:$GATEHOUSE_USER or user:$USER)')
    .action((ws: string, id: string, opts: { reason: string; by?: string }) =>
      run("approval", async () => {
        const decidedBy = personArg(opts.by ?? who("--by"), "--by");
        const c = decisionsClient();
        const res = await call(c, c.reject, {
          workspaceId: ws,
          actionId: parseId(id, "action id"),
          decidedBy,
          reason: opts.reason,
        });
        emit(
          globals().json,
          res.actions.map((a) => ActionRecord.toJSON(a)),
          () => actionsTable(res.actions),
        );
      }),
    );

  program
    .command("revert <workspace> <id>")
    .description(
      "ask to revert an applied action: its gatekeeper stages the inverse write as a new pending action to approve",
    )
    .option("--by <person>", 'who asks, "user:<id>" (default: user:$GATEHOUSE_USER or user:$USER)')
    .action((ws: string, id: string, opts: { by?: string }) =>
      run("approval", async () => {
        const actionId = parseId(id, "action id");
        const requestedBy = opts.by ?? who("--by");
        if (!/^user:\S/.test(requestedBy)) {
          throw new Error(`--by must be "user:<id>", e.g. --by user:alice (got "${requestedBy}")`);
        }
        const c = decisionsClient();
        const res = await call(c, c.requestRevert, { workspaceId: ws, actionId, requestedBy });
        emit(globals().json, RequestRevertResponse.toJSON(res), () => {
          const r = res.revert;
          if (!r) return "(no revert action returned)";
          const next =
            r.status === ActionStatus.ACTION_STATUS_PENDING
              ? `\nrevert of action ${actionId} is pending as action ${r.id}; approve it with: gatehouse approve ${ws} ${r.id}`
              : "";
          return `${actionsTable([r])}${next}`;
        });
      }),
    );

  program
    .command("rule <workspace> <binding> <action-kind-tag>")
    .description("enable (default) or disable auto-approval for a binding's action kind")
    .option("--off", "disable the rule")
    .action((ws: string, binding: string, tag: string, opts: { off?: boolean }) =>
      run("approval", async () => {
        const c = decisionsClient();
        const res = await call(c, c.setAutoApprovalRule, {
          workspaceId: ws,
          binding,
          actionKindTag: tag,
          enabled: !opts.off,
          setBy: who(),
        });
        emit(
          globals().json,
          res,
          () =>
            `rule ${binding}/${tag} ${opts.off ? "disabled" : "enabled"}; auto-approved now: ${res.drained.length}`,
        );
      }),
    );

  program
    .command("log <workspace>")
    .description("observations, actions and refused writes in one table, by log id (the live projection)")
    .action((ws: string) =>
      run("approval", async () => {
        const c = decisionsClient();
        const view = await call(c, c.getLog, { workspaceId: ws });
        emit(globals().json, LogView.toJSON(view), () => logTable(view));
      }),
    );

  program
    .command("replay <workspace>")
    .description("rebuild the log by folding the event stream from the start")
    .option("--until <revision>", "stop at this stream revision (inclusive)")
    .action((ws: string, opts: { until?: string }) =>
      run("approval", async () => {
        const c = decisionsClient();
        const until = opts.until === undefined ? undefined : parseId(opts.until, "--until revision");
        const view = await call(c, c.replay, { workspaceId: ws, untilRevision: until });
        emit(globals().json, LogView.toJSON(view), () => logTable(view));
      }),
    );

  program
    .command("verify <workspace>")
    .description(
      "recompute the stream's hash chain; exits 1 and names the revision when it was tampered with",
    )
    .action((ws: string) =>
      run("approval", async () => {
        const gateway = gatewayTarget();
        const res = gateway
          ? await gatewayRequest<VerifyResponse>(
              gateway,
              "GET",
              `/api/workspaces/${encodeURIComponent(ws)}/verify`,
            )
          : await (async () => {
              const c = decisionsClient();
              return call(c, c.verify, { workspaceId: ws });
            })();
        emit(globals().json, res, () => verifyText(res));
        if (!res.ok) process.exitCode = 1;
      }),
    );
}

/**
 * The service's "action 5 depends on undecided action(s) 3; … (CLI: gatehouse approve --with-deps)"
 * names the flag only: make it the whole command to copy, `gatehouse approve <ws> 5 --with-deps`.
 * Returns `err` (its `details` rewritten when it is that error).
 */
function withDepsCommand(err: unknown, ws: string): unknown {
  const e = err as { details?: unknown };
  if (typeof e?.details !== "string") return err;
  const id = /\baction (\d+) depends on undecided/.exec(e.details)?.[1];
  if (id) {
    e.details = e.details.replace(
      "(CLI: gatehouse approve --with-deps)",
      `(CLI: gatehouse approve ${ws} ${id} --with-deps)`,
    );
  }
  return err;
}
