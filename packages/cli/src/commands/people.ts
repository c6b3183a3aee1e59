/** Commands for people deciding and auditing: actions, approve, reject, revert, rules, log, replay, verify. */
import { ActionRecord, ActionStatus, LogView, RequestRevertResponse } from "@gatehouse/proto";
import type { Command } from "commander";
import { call, decisionsClient } from "../clients.ts";
import { actionsTable, emit, logTable, verifyText } from "../output.ts";
import { type GlobalOptions, parseId, run, who } from "./shared.ts";

export function registerPeopleCommands(program: Command, globals: () => GlobalOptions): void {
  program
    .command("actions <workspace>")
    .description("list the workspace's actions (the action-log projection)")
    .option("--pending", "only pending actions")
    .action((ws: string, opts: { pending?: boolean }) =>
      run("approval", async () => {
        const c = decisionsClient();
        const res = await call(c, c.listActions, { workspaceId: ws, pendingOnly: !!opts.pending });
        emit(
          globals().json,
          res.actions.map((a) => ActionRecord.toJSON(a)),
          () => actionsTable(res.actions),
        );
      }),
    );

  program
    .command("approve <workspace> [ids...]")
    .description("approve actions (applied in submission order); --all approves every pending one")
    .option("--all", "approve every pending action of the workspace")
    .option("--with-deps", "also approve the undecided actions these depend on")
    .action((ws: string, ids: string[], opts: { all?: boolean; withDeps?: boolean }) =>
      run("approval", async () => {
        if (opts.all && ids.length) throw new Error("give either action ids or --all, not both");
        if (!opts.all && !ids.length) throw new Error("give the ids of the actions to approve, or --all");
        const actionIds = ids.map((s) => parseId(s, "action id"));
        const c = decisionsClient();
        const res =
          actionIds.length === 1 && !opts.all
            ? await call(c, c.approve, {
                workspaceId: ws,
                actionId: actionIds[0]!,
                decidedBy: who(),
                includeDependencies: !!opts.withDeps,
              })
            : await call(c, c.approveBatch, {
                workspaceId: ws,
                actionIds,
                decidedBy: who(),
                all: !!opts.all,
              });
        emit(
          globals().json,
          res.actions.map((a) => ActionRecord.toJSON(a)),
          () => actionsTable(res.actions),
        );
        const failed = res.actions.filter((a) => a.status === ActionStatus.ACTION_STATUS_FAILED);
        if (failed.length) {
          process.stderr.write(
            `gatehouse: ${failed.length} approved action(s) failed to apply: ${failed.map((a) => a.id).join(", ")}\n`,
          );
          process.exitCode = 1;
        }
      }),
    );

  program
    .command("reject <workspace> <id>")
    .description("reject an action; actions that depend on it are rejected too")
    .requiredOption("--reason <text>", "why (shown to the agent and in the log)")
    .action((ws: string, id: string, opts: { reason: string }) =>
      run("approval", async () => {
        const c = decisionsClient();
        const res = await call(c, c.reject, {
          workspaceId: ws,
          actionId: parseId(id, "action id"),
          decidedBy: who(),
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
        const requestedBy = opts.by ?? who();
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
        const c = decisionsClient();
        const res = await call(c, c.verify, { workspaceId: ws });
        emit(globals().json, res, () => verifyText(res));
        if (!res.ok) process.exitCode = 1;
      }),
    );
}
