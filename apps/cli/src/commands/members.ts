/**
 * Workspace membership on the command line: `gatehouse members <ws>` lists who reaches a workspace
 * through the gateway (its owner and members), `gatehouse members add <ws> <person>` adds one and
 * `gatehouse members remove <ws> <person>` takes one's access back (Kernel.AddMember / RemoveMember; the CLI talks to the kernel directly, as an operator: the owner-only rule is
 * the gateway's). Also the notes `workspace create` prints about who will reach a new workspace, so
 * a workspace nobody can open in the web app is said so plainly.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Workspace } from "@gatehouse/proto";
import type { Command } from "commander";
import { parse } from "yaml";
import { call, dataDir, kernelClient } from "../clients.ts";
import { emit } from "../output.ts";
import { type GlobalOptions, run, who } from "./shared.ts";

/**
 * A person argument as membership names people: "alice" or "user:alice" → "user:alice".
 * @throws Error naming `flag` when the subject is empty or has spaces or non-ASCII characters.
 */
export function personArg(value: string, flag: string): string {
  const id = value.startsWith("user:") ? value : `user:${value}`;
  if (!/^user:[\x21-\x7e]{1,255}$/.test(id)) {
    throw new Error(
      `${flag} must name a person as "user:<subject>" (the subject of their sign-in token, no spaces), e.g. ${flag.startsWith("-") ? `${flag} ` : ""}user:dev-approver (got "${value}")`,
    );
  }
  return id;
}

/**
 * The people `gatehouse dev` prints sign-in links for (subjects in `<data dir>/dev-tokens.yaml`),
 * when the CLI talks to that gatehouse dev (its dev.json is there and no kernel address is set);
 * otherwise undefined: the CLI cannot know who signs in to another gateway.
 */
function devPeople(): string[] | undefined {
  if (process.env.GATEHOUSE_KERNEL_ADDRESS) return undefined;
  const file = resolve(dataDir(), "dev-tokens.yaml");
  if (!existsSync(file) || !existsSync(resolve(dataDir(), "dev.json"))) return undefined;
  try {
    const tokens = (parse(readFileSync(file, "utf8")) as { tokens?: Array<{ subject?: unknown }> }).tokens;
    return (tokens ?? []).map((t) => String(t.subject ?? "")).filter(Boolean);
  } catch {
    return undefined;
  }
}

/**
 * What to tell the person who created `ws` about who reaches it: who owns it when the owner was the
 * default, and, against `gatehouse dev`, that none of its sign-in people reach it when so.
 * @param defaultedOwner true when --owner was not given.
 */
export function reachNotes(ws: Workspace, defaultedOwner: boolean): string[] {
  const notes: string[] = [];
  const members = ws.members.length > 0 ? ws.members.join(", ") : "none";
  if (defaultedOwner) {
    notes.push(
      `workspace ${ws.id} is owned by ${ws.owner} (no --owner: the default is user:$GATEHOUSE_USER, else user:$USER); members: ${members}. Through the gateway (web app, inbox, /mcp) only its owner and members reach it.`,
    );
  }
  const people = devPeople();
  if (people && people.length > 0) {
    const reaching = people.filter((p) => ws.owner === `user:${p}` || ws.members.includes(`user:${p}`));
    if (reaching.length === 0) {
      notes.push(
        `none of gatehouse dev's sign-in people (${people.join(", ")}) reach workspace ${ws.id} in the web app; add one with \`gatehouse members add ${ws.id} user:${people[0]}\`, or create workspaces with --owner user:${people[0]}`,
      );
    }
  }
  return notes;
}

/** "owner user:a; members user:b, user:c" — or says nobody owns it. */
export function membershipText(ws: Workspace): string {
  const owner = ws.owner || "none (nobody reaches it through the gateway)";
  return `owner ${owner}; members ${ws.members.length > 0 ? ws.members.join(", ") : "none"}`;
}

export function registerMemberCommands(program: Command, globals: () => GlobalOptions): void {
  const members = program
    .command("members")
    .description(
      "who reaches a workspace through the gateway (web app, inbox, /mcp): its owner and members; `members add` / `members remove` change them",
    )
    .argument("<workspace>")
    .action((ws: string) =>
      run("kernel", async () => {
        const k = kernelClient();
        const res = await call(k, k.getWorkspace, { workspaceId: ws });
        emit(globals().json, res, () =>
          [
            `owner\t${res.owner || "none (nobody reaches it through the gateway; add a member)"}`,
            ...res.members.map((m) => `member\t${m}`),
          ].join("\n"),
        );
      }),
    );
  members
    .command("add <workspace> <person>")
    .description(
      'let a person ("user:<subject>", or just the subject) reach the workspace through the gateway',
    )
    .option("--by <person>", "who adds them (default: user:$GATEHOUSE_USER or user:$USER)")
    .action((ws: string, person: string, opts: { by?: string }) =>
      run("kernel", async () => {
        const member = personArg(person, "<person>");
        const addedBy = personArg(opts.by ?? who("--by"), "--by");
        const k = kernelClient();
        const res = await call(k, k.addMember, { workspaceId: ws, member, addedBy });
        emit(globals().json, res, () => `added ${member} to ${ws}: ${membershipText(res)}`);
      }),
    );
  members
    .command("remove <workspace> <person>")
    .description(
      "take a member's access back (the owner cannot be removed); their past records stay in the log",
    )
    .option("--by <person>", "who removes them (default: user:$GATEHOUSE_USER or user:$USER)")
    .action((ws: string, person: string, opts: { by?: string }) =>
      run("kernel", async () => {
        const member = personArg(person, "<person>");
        const removedBy = personArg(opts.by ?? who("--by"), "--by");
        const k = kernelClient();
        const res = await call(k, k.removeMember, { workspaceId: ws, member, removedBy });
        emit(globals().json, res, () => `removed ${member} from ${ws}: ${membershipText(res)}`);
      }),
    );
}
