/**
 * A long wait for people, cut into slices: each slice is one blocking read at the service (GetTurn
 * or GetConnectionRequest with `wait`) of at most `SLICE_SECONDS`, and after each one the tool sends
 * `notifications/progress` when the request carries a progressToken. Shared by wait_for_decisions and
 * request_connection.
 */
import { status } from "@grpc/grpc-js";
import { z } from "zod";
import type { ToolExtra } from "../tool-registry.ts";

/** Wait when `timeout_seconds` is not given, seconds: under the 60 s request timeout MCP clients
 * (the TypeScript SDK's Client among them) apply by default. */
export const DEFAULT_WAIT_SECONDS = 50;
/** Longest wait one call may ask for, seconds (10 minutes); call again to wait longer. */
export const MAX_WAIT_SECONDS = 600;
/** Longest single blocking read, seconds: progress is reported at least this often. */
export const SLICE_SECONDS = 10;

/**
 * The `timeout_seconds` input of a tool that waits for `what` (e.g. "a person's decision"):
 * optional, whole seconds 1…MAX_WAIT_SECONDS, DEFAULT_WAIT_SECONDS when absent.
 */
export function waitSecondsInput(what: string) {
  return z
    .number()
    .int()
    .min(1)
    .max(MAX_WAIT_SECONDS)
    .optional()
    .describe(
      `How long to wait for ${what}, seconds (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}); progress notifications come every ${SLICE_SECONDS} s`,
    );
}

/** Sends `notifications/progress` for the request when it asked for progress; never throws. */
export async function reportProgress(
  extra: ToolExtra,
  progress: number,
  total: number,
  message: string,
): Promise<void> {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return;
  await extra
    .sendNotification({
      method: "notifications/progress",
      params: { progressToken, progress, total, message },
    })
    .catch(() => undefined);
}

/** What one sliced wait needs. */
export interface SlicedWait<T> {
  /** How long to wait in all, seconds. */
  seconds: number;
  extra: ToolExtra;
  /** The state now, without blocking. */
  now: () => Promise<T>;
  /** One blocking read that answers once the state changed or after about `ms`, whichever is first. */
  waitUpTo: (ms: number) => Promise<T>;
  /** Whether the wait is over (the thing was decided). */
  settled: (state: T) => boolean;
  /** The progress message after `waited` of `seconds` seconds. */
  progress: (state: T, waited: number) => string;
}

/**
 * Waits from `first` until `settled`, `seconds` pass, or `extra.signal` aborts; reports progress
 * (elapsed seconds of `seconds`) once it knows it must wait, then after each slice. A slice the
 * service answers just past its deadline (a busy machine) is read again without blocking.
 * @returns the last state read. @throws the service's ServiceError, AbortError.
 */
export async function waitInSlices<T>(first: T, w: SlicedWait<T>): Promise<T> {
  const started = Date.now();
  const deadline = started + w.seconds * 1000;
  let state = first;
  let reported = -1;
  for (;;) {
    if (w.settled(state) || Date.now() >= deadline - 250) return state;
    const waited = Math.max(reported + 0.001, Math.round((Date.now() - started) / 100) / 10);
    reported = waited;
    await reportProgress(w.extra, waited, w.seconds, w.progress(state, waited));
    const sliceMs = Math.min(SLICE_SECONDS * 1000, deadline - Date.now());
    if (sliceMs < 500) return w.now();
    state = await w.waitUpTo(sliceMs).catch((err: { code?: number }) => {
      if (err.code !== status.DEADLINE_EXCEEDED) throw err;
      return w.now();
    });
  }
}
