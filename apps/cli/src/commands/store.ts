/**
 * `gatehouse store migrate|copy|verify`: operator commands on an event store named by URL
 * (`sqlite:<path>`, `postgres://user:password@host:5432/db`, `kurrentdb://host:2113`). They talk to the
 * store directly, not to the services. The work itself is in @gatehouse/event-store (migrateStore,
 * copyEventStore, verifyStore); this file parses flags and prints.
 */
import {
  type CopyProgress,
  copyEventStore,
  type EventStore,
  migrateStore,
  openStoreAt,
  redactUrl,
  type StreamVerification,
  sameStore,
  verifyStore,
} from "@gatehouse/event-store";
import type { Command } from "commander";
import { emit, terminalSafe } from "../output.ts";
import { type GlobalOptions, parseId, run } from "./shared.ts";

const URL_FORMS = "sqlite:<path>, postgres://user:password@host:5432/db or kurrentdb://host:2113";

/** One line on stdout: JSON text for --json, else terminal-safe text. */
function line(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${terminalSafe(text)}\n`);
}

/** "1 event" / "2 events". */
function events(n: number): string {
  return `${n} event${n === 1 ? "" : "s"}`;
}

/** "workspace-1: copied 120 events, now at revision 119" and its variants for resumed and complete streams. */
export function copyProgressText(p: CopyProgress): string {
  if (p.copied === 0 && p.alreadyPresent > 0)
    return `${p.streamId}: already copied (${events(p.alreadyPresent)})`;
  const resumed = p.alreadyPresent > 0 ? ` after the ${events(p.alreadyPresent)} already there` : "";
  return `${p.streamId}: copied ${events(p.copied)}${resumed}, now at revision ${p.revision}`;
}

/** "ok        workspace-0: 6 events, hash chain intact" or "TAMPERED  workspace-1 at revision 3: …". */
export function verifyLineText(v: StreamVerification): string {
  return v.ok
    ? `ok        ${v.streamId}: ${events(v.eventsChecked)}, hash chain intact`
    : `TAMPERED  ${v.streamId} at revision ${v.firstBadRevision}: ${v.problem}`;
}

async function closeAll(...stores: Array<EventStore | undefined>): Promise<void> {
  await Promise.all(stores.map((s) => s?.close().catch(() => {})));
}

export function registerStoreCommands(program: Command, globals: () => GlobalOptions): void {
  const store = program
    .command("store")
    .description(`operate on an event store by URL (${URL_FORMS}): migrate, copy, verify`);

  store
    .command("migrate")
    .description(
      "bring a store's schema to this Gatehouse's (PostgreSQL; idempotent). SQLite migrates itself on open; KurrentDB has no schema",
    )
    .requiredOption("--url <url>", `the store: ${URL_FORMS}`)
    .action((opts: { url: string }) =>
      run("event store", async () => {
        const report = await migrateStore(opts.url);
        const json = globals().json;
        if (json || report.before === null) {
          emit(json, report, () => report.message);
          return;
        }
        emit(false, report, () =>
          [
            `schema version before: ${report.before}`,
            report.applied.length > 0
              ? `applied: ${report.applied.join(", ")}`
              : "applied: nothing (current)",
            `schema version after: ${report.after}`,
            report.message,
          ].join("\n"),
        );
      }),
    );

  store
    .command("copy")
    .description(
      "copy every stream, event for event with its ids, metadata and hashes; re-run after an interruption to continue; never overwrites a target stream that differs",
    )
    .requiredOption("--from <url>", "the source store (must exist)")
    .requiredOption("--to <url>", "the target store (a SQLite file is created; PostgreSQL must be migrated)")
    .option("--page-size <n>", "events per read and atomic append, 1 to 10000", "500")
    .action((opts: { from: string; to: string; pageSize: string }) =>
      run("event store", async () => {
        const json = globals().json;
        const pageSize = parseId(opts.pageSize, "--page-size");
        if (pageSize < 1 || pageSize > 10_000)
          throw new Error(`--page-size must be from 1 to 10000 (got ${pageSize})`);
        if (sameStore(opts.from, opts.to))
          throw new Error(
            `--from and --to name the same store (${redactUrl(opts.to)}); copy into another one`,
          );
        let source: EventStore | undefined;
        let target: EventStore | undefined;
        const stop = new AbortController();
        const interrupt = () => stop.abort(new Error("interrupted"));
        process.once("SIGINT", interrupt);
        try {
          source = await openStoreAt(opts.from);
          target = await openStoreAt(opts.to, { create: true });
          const result = await copyEventStore(source, target, {
            pageSize,
            signal: stop.signal,
            onProgress: (p) => {
              if (p.done)
                line(
                  json,
                  {
                    stream: p.streamId,
                    copied: p.copied,
                    alreadyPresent: p.alreadyPresent,
                    revision: p.revision,
                  },
                  copyProgressText(p),
                );
            },
          });
          const seconds = Math.round(result.seconds * 100) / 100;
          line(
            json,
            { done: true, ...result, seconds },
            `copied ${events(result.eventsCopied)} in ${result.streams} stream${result.streams === 1 ? "" : "s"} (${events(result.eventsAlreadyPresent)} already present) in ${seconds} s: ${redactUrl(opts.from)} → ${redactUrl(opts.to)}`,
          );
        } catch (error) {
          if (!stop.signal.aborted) throw error;
          line(
            json,
            { done: false, interrupted: true },
            "interrupted: every page appended so far is kept; run the same command again to continue",
          );
          process.exitCode = 130;
        } finally {
          process.removeListener("SIGINT", interrupt);
          await closeAll(source, target);
        }
      }),
    );

  store
    .command("verify")
    .description(
      "recompute every stream's hash chain (or one stream's); exit code 1 naming each stream, revision and problem when one fails",
    )
    .requiredOption("--url <url>", `the store: ${URL_FORMS}`)
    .option(
      "--stream <id>",
      "verify only this stream: a stream id (workspace streams are workspace-<id>) or a workspace id",
    )
    .action((opts: { url: string; stream?: string }) =>
      run("event store", async () => {
        const json = globals().json;
        const store = await openStoreAt(opts.url);
        try {
          const results: StreamVerification[] = [];
          const result = await verifyStore(store, {
            streams: opts.stream === undefined ? undefined : [await streamNamed(store, opts.stream)],
            onStream: (v) => {
              results.push(v);
              if (!json) line(false, v, verifyLineText(v));
            },
          });
          const summary = result.ok
            ? `ok: ${result.streams} stream${result.streams === 1 ? "" : "s"}, ${events(result.eventsChecked)} checked, every hash chain intact`
            : `TAMPERED: ${result.failed.length} of ${result.streams} streams failed: ${result.failed.map((f) => `${f.streamId} at revision ${f.firstBadRevision}`).join(", ")}`;
          emit(json, { ...result, results }, () => summary);
          if (!result.ok) process.exitCode = 1;
        } finally {
          await closeAll(store);
        }
      }),
    );
}

/** `id` when such a stream exists; else `workspace-<id>` when that one does (a workspace id was given); else `id`. */
async function streamNamed(store: EventStore, id: string): Promise<string> {
  if ((await store.streamRevision(id)) >= 0) return id;
  const workspace = `workspace-${id}`;
  return (await store.streamRevision(workspace)) >= 0 ? workspace : id;
}
