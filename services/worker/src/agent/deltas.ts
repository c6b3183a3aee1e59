/**
 * Throttled model-text deltas of one model step (`ChatDelta`, gateway-contract chats.ts): text
 * arriving from the provider is coalesced and sent at most once per interval, so a fast model does
 * not send a message per token. The provider key is scrubbed from the step's text as a whole
 * (stream-scrub.ts), so a key split across pieces never reaches a delta. Deltas are best effort and
 * never stored; the step's `ChatModelMessage` carries the whole text.
 */
import type { ChatDelta } from "@gatehouse/gateway-contract";
import { streamScrubber } from "./stream-scrub.ts";

/** Default least time between two deltas of one step, ms. */
export const DELTA_EVERY_MS = 50;

/** Where a step's deltas go (a notice bus's `publishChatDelta`); undefined: nowhere. */
export type DeltaSink = (delta: ChatDelta) => void;

/** The deltas of one step. */
export interface StepDeltas {
  /**
   * Adds raw text that just arrived (the key not yet scrubbed); it is sent now or with the next delta,
   * except a tail that may be the start of the key, held until more text arrives or the flush.
   */
  push(text: string): void;
  /** Sends what is held now, scrubbed (call once the model's answer is complete), and stops the timer. */
  flush(): void;
}

/**
 * Deltas of `step` in `chatId`/`turnId`, numbered from seq 0, sent to `sink` at most once per
 * `everyMs`, every occurrence of `secret` (the provider key; "" = none) replaced with "[redacted]":
 * the deltas joined are exactly the step's scrubbed text. A sink that throws (a workspace id that is
 * not a subject token) stops the deltas of this step; the step itself goes on.
 */
export function stepDeltas(
  sink: DeltaSink | undefined,
  where: { workspaceId: string; chatId: string; turnId: string; step: number },
  everyMs = DELTA_EVERY_MS,
  secret = "",
): StepDeltas {
  if (!sink) return { push: () => {}, flush: () => {} };
  const scrubber = streamScrubber(secret);
  let held = "";
  let seq = 0;
  let lastSent = 0;
  let timer: NodeJS.Timeout | undefined;
  let broken = false;
  const send = () => {
    clearTimeout(timer);
    timer = undefined;
    if (!held || broken) return;
    const text = held;
    held = "";
    lastSent = Date.now();
    try {
      sink({ ...where, seq: seq++, text });
    } catch {
      broken = true;
    }
  };
  return {
    push(text) {
      if (!text || broken) return;
      held += scrubber.push(text);
      if (timer || !held) return;
      const wait = lastSent + everyMs - Date.now();
      if (wait <= 0) send();
      else timer = setTimeout(send, wait);
    },
    flush() {
      if (!broken) held += scrubber.end();
      send();
    },
  };
}
