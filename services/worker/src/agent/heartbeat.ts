/**
 * Heartbeating while an activity awaits something long (a model answer, a snippet run), so Temporal
 * notices a dead worker within the heartbeat timeout and retries on another one, instead of waiting
 * for the whole start-to-close timeout.
 */
import { Context } from "@temporalio/activity";

/** How often a waiting agent activity heartbeats, ms (the workflow's heartbeat timeout is 15 s). */
export const HEARTBEAT_EVERY_MS = 2_000;

/** Awaits `work`, heartbeating every HEARTBEAT_EVERY_MS meanwhile. */
export async function heartbeating<T>(work: Promise<T>): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
