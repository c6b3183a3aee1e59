/** Commands for setting up work: workspace create/list, connect, disconnect, bindings, exec. */
import { readFileSync } from "node:fs";
import type { Binding } from "@gatehouse/proto";
import { RemoveBindingResponse } from "@gatehouse/proto";
import { status } from "@grpc/grpc-js";
import type { Command } from "commander";
import { call, kernelClient } from "../clients.ts";
import { gatewayCreateWorkspace, gatewayExecute, gatewayRequest, gatewayTarget } from "../gateway.ts";
import { emit, turnText } from "../output.ts";
import { membershipText, personArg, reachNotes } from "./members.ts";
import { type GlobalOptions, parseDuration, run, who } from "./shared.ts";

/**
 * Comment lines listing a binding's action kinds for `gatehouse bindings`: which tags
 * `gatehouse rule` accepts, and why the others always need a person.
 */
export function actionKindLines(b: Binding): string {
  const kinds = b.actionKinds?.kinds;
  if (!kinds) {
    return `// action kinds: not published (introduced before gatekeepers published them; to set rules, gatehouse disconnect <workspace> ${b.name} and connect it again)\n`;
  }
  if (kinds.length === 0) return "// action kinds: none (every method reads)\n";
  const lines = kinds.map((k) =>
    k.autoApprovable
      ? `//   ${k.tag} — ${k.label}: a rule may auto-approve it`
      : `//   ${k.tag} — ${k.label}: always needs a person (${k.notAutoApprovableReason})`,
  );
  return `// action kinds (gatehouse rule <workspace> ${b.name} <tag>):\n${lines.join("\n")}\n`;
}

export function registerWorkspaceCommands(program: Command, globals: () => GlobalOptions): void {
  const workspace = program.command("workspace").description("create and list workspaces");
  workspace
    .command("create")
    .description(
      "create a workspace and print its id; its owner and members reach it through the gateway (web app, inbox, /mcp)",
    )
    .option("--name <name>", "a human name", "")
    .option("--owner <person>", 'who owns it, "user:<subject>" (default: user:$GATEHOUSE_USER or user:$USER)')
    .option(
      "--member <person>",
      "a member to add at once (repeat the flag for more)",
      (value: string, prev: string[]) => [...prev, value],
      [] as string[],
    )
    .action((opts: { name: string; owner?: string; member: string[] }) =>
      run("kernel", async () => {
        const gateway = gatewayTarget();
        if (gateway) {
          // Through the gateway the signed-in person owns it.
          if (opts.owner)
            throw new Error(
              "--owner: through the gateway the token's person owns the workspace; drop --owner",
            );
          const members = opts.member.map((m) => personArg(m, "--member"));
          const ws = await gatewayCreateWorkspace(gateway, opts.name, members);
          emit(globals().json, ws, () => ws.id);
          return;
        }
        const owner = personArg(opts.owner ?? who("--owner"), "--owner");
        const members = opts.member.map((m) => personArg(m, "--member"));
        const k = kernelClient();
        const ws = await call(k, k.createWorkspace, { name: opts.name, owner, members });
        const notes = reachNotes(ws, opts.owner === undefined);
        emit(globals().json, { ...ws, notes }, () => ws.id);
        if (!globals().json) for (const n of notes) process.stderr.write(`gatehouse: ${n}\n`);
      }),
    );
  workspace
    .command("list")
    .description("list workspaces with their owner and members")
    .option("--person <person>", 'only those this person ("user:<subject>") owns or is a member of')
    .action((opts: { person?: string }) =>
      run("kernel", async () => {
        const person = opts.person === undefined ? "" : personArg(opts.person, "--person");
        const k = kernelClient();
        const res = await call(k, k.listWorkspaces, { person });
        emit(globals().json, res.workspaces, () =>
          res.workspaces.length
            ? res.workspaces.map((w) => `${w.id}\t${w.name}\t${membershipText(w)}`).join("\n")
            : person
              ? `no workspaces for ${person}`
              : "no workspaces",
        );
      }),
    );

  program
    .command("connect <workspace> <url>")
    .description("introduce a resource (e.g. mcp://memory#tool=read_graph) and print its binding name")
    .option("--name <binding>", "binding name (env.<NAME>)", "")
    .action((ws: string, url: string, opts: { name: string }) =>
      run("kernel", async () => {
        const gateway = gatewayTarget();
        if (gateway) {
          const b = await gatewayRequest<{ name: string; trust: string; methods: string[] }>(
            gateway,
            "POST",
            `/api/workspaces/${encodeURIComponent(ws)}/bindings`,
            { url, name: opts.name },
          );
          emit(globals().json, b, () => `${b.name}\t${b.trust}\t${b.methods.join(", ")}`);
          return;
        }
        const k = kernelClient();
        const b = await call(k, k.introduceResource, { workspaceId: ws, url, name: opts.name });
        emit(globals().json, b, () => `${b.name}\t${b.trust}\t${b.methods.join(", ")}`);
      }),
    );

  program
    .command("disconnect <workspace> <binding>")
    .description(
      "remove a binding: gone from env for later executions, refused at a running one's next call; its pending writes are rejected (binding removed)",
    )
    .option("--reason <text>", "why, recorded with the removal", "")
    .option("--by <person>", 'who removes it, "user:<id>" (default: user:$GATEHOUSE_USER or user:$USER)')
    .action((ws: string, binding: string, opts: { reason: string; by?: string }) =>
      run("kernel", async () => {
        const removedBy = opts.by ?? who("--by");
        if (!/^user:\S/.test(removedBy)) {
          throw new Error(`--by must be "user:<id>", e.g. --by user:alice (got "${removedBy}")`);
        }
        const k = kernelClient();
        const res = await call(k, k.removeBinding, {
          workspaceId: ws,
          binding,
          removedBy,
          reason: opts.reason,
        });
        emit(globals().json, RemoveBindingResponse.toJSON(res), () => {
          const ids = (list: number[]) => (list.length > 0 ? list.join(", ") : "none");
          return [
            `removed ${res.binding} from ${ws}`,
            `rejected (binding removed): ${ids(res.rejectedActionIds)}`,
            `rejected by cascade: ${ids(res.cascadedActionIds)}`,
          ].join("\n");
        });
      }),
    );

  program
    .command("bindings <workspace>")
    .description("print the bindings and the TypeScript declarations an agent is given")
    .action((ws: string) =>
      run("kernel", async () => {
        const k = kernelClient();
        const res = await call(k, k.describeBindings, { workspaceId: ws });
        emit(
          globals().json,
          res.bindings,
          () =>
            res.bindings
              .map((b) => `// env.${b.name} — ${b.url} (${b.trust})\n${actionKindLines(b)}${b.dts}`)
              .join("\n\n") || "(no bindings)",
        );
      }),
    );

  program
    .command("exec <workspace> <file>")
    .description("run a TypeScript snippet `export default async (env) => {...}` in the sandbox")
    .option("--timeout <duration>", "wall-time limit, e.g. 500ms, 30s, 2m (default 10s, at most 5m)")
    .action((ws: string, file: string, opts: { timeout?: string }) =>
      run("kernel", async () => {
        let code: string;
        try {
          code = readFileSync(file, "utf8");
        } catch {
          throw new Error(`cannot read snippet file "${file}"`);
        }
        const wallTimeMs = opts.timeout ? parseDuration(opts.timeout, "--timeout", "ms") : 0;
        const gateway = gatewayTarget();
        if (gateway) {
          const res = await gatewayExecute(
            gateway,
            ws,
            code,
            wallTimeMs ? Math.max(1, Math.ceil(wallTimeMs / 1000)) : undefined,
          );
          emit(globals().json, res, () => {
            const lines = [
              ...res.warnings.map((w) => `WARNING: ${w}`),
              ...res.console.map((l) => (l.level === "log" ? l.text : `[${l.level}] ${l.text}`)),
              ...res.observed.map((o) => `read #${o.id} ${o.binding}: ${o.title}`),
              ...res.submitted.map(
                (a) =>
                  `submitted for approval #${a.actionId} ${a.binding}: ${a.title} (gatehouse approve ${ws} ${a.actionId})`,
              ),
            ];
            if (res.outputTruncated) lines.push("[output truncated]");
            if (res.ok)
              lines.push(
                `=> ${res.returnValue === undefined ? "undefined" : JSON.stringify(res.returnValue)}`,
              );
            else {
              const where = res.error?.line
                ? ` (line ${res.error.line}${res.error.column ? `:${res.error.column}` : ""})`
                : "";
              lines.push(`${res.error?.name ?? "Error"}: ${res.error?.message ?? ""}${where}`);
            }
            lines.push(`(${res.durationMs} ms)`);
            return lines.join("\n");
          });
          if (!res.ok) process.exitCode = 1;
          return;
        }
        const k = kernelClient();
        const res = await call(
          k,
          k.executeCode,
          {
            workspaceId: ws,
            code,
            caller: { kind: "user", id: "" },
            limits: { wallTimeMs, heapMb: 0, outputBytes: 0 },
            executionId: "",
          },
          (wallTimeMs || 10_000) + 60_000,
        );
        const value = { ...res, returnValue: res.returnJson ? JSON.parse(res.returnJson) : undefined };
        emit(globals().json, value, () => {
          const lines = [
            ...res.warnings.map((w) => `WARNING: ${w}`),
            ...res.console.map((l) => (l.level === "log" ? l.text : `[${l.level}] ${l.text}`)),
          ];
          if (res.outputTruncated) lines.push("[output truncated]");
          if (res.ok) lines.push(`=> ${res.returnJson || "undefined"}`);
          else {
            const where = res.error?.line
              ? ` (line ${res.error.line}${res.error.column ? `:${res.error.column}` : ""})`
              : "";
            lines.push(`${res.error?.name ?? "Error"}: ${res.error?.message ?? ""}${where}`);
          }
          lines.push(`(${res.durationMs} ms)`);
          if (res.turnId) {
            lines.push(
              `turn suspended until its awaited actions are decided: gatehouse turn ${ws} ${res.turnId} --wait`,
            );
          }
          return lines.join("\n");
        });
        if (!res.ok) process.exitCode = 1;
      }),
    );

  program
    .command("turn <workspace> <turn-id>")
    .description(
      "show an await-decision turn; --wait blocks until it resumed (prints the results) or completed",
    )
    .option("--wait", "wait until every awaited action is decided")
    .option("--timeout <duration>", "with --wait, give up waiting after this long, e.g. 30s, 10m", "1h")
    .action((ws: string, turnId: string, opts: { wait?: boolean; timeout: string }) =>
      run("kernel", async () => {
        const waitMs = parseDuration(opts.timeout, "--timeout", "s");
        const k = kernelClient();
        // The kernel answers with the current state shortly before the call's deadline; on a busy
        // machine that answer can miss the deadline, so then the state is asked for once more.
        const turn = await call(
          k,
          k.getTurn,
          { workspaceId: ws, turnId, wait: !!opts.wait },
          waitMs + 1000,
        ).catch((err: { code?: number }) => {
          if (!opts.wait || err.code !== status.DEADLINE_EXCEEDED) throw err;
          return call(k, k.getTurn, { workspaceId: ws, turnId, wait: false });
        });
        emit(globals().json, turn, () => turnText(turn));
        if (opts.wait && turn.state === "suspended") {
          process.stderr.write("gatehouse: the turn is still suspended (timed out waiting)\n");
          process.exitCode = 1;
        }
      }),
    );
}
