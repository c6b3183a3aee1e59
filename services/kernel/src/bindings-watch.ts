/**
 * Kernel.WatchBindings: a workspace's binding changes as a stream, read from the event store (a
 * catch-up-then-live subscription), so a change made through any kernel process reaches every
 * watcher without NATS.
 */
import type { EventStore, StoredEvent } from "@gatehouse/event-store";
import { BindingRemoved, type BindingsChanged, ResourceIntroduced } from "@gatehouse/proto";
import { streamOf } from "./domain/workspace.ts";

/** The change an event makes to the bindings, or undefined for an event about something else. */
export function bindingChangeOf(event: StoredEvent): BindingsChanged | undefined {
  if (event.type === "ResourceIntroduced") {
    const e = ResourceIntroduced.fromJSON(event.data);
    return { revision: event.revision, binding: e.binding, change: "introduced" };
  }
  if (event.type === "BindingRemoved") {
    const e = BindingRemoved.fromJSON(event.data);
    return { revision: event.revision, binding: e.binding, change: "removed" };
  }
  return undefined;
}

/**
 * Calls `send` for every binding change appended to the workspace after `afterRevision`, in order,
 * until `signal` aborts; `onError` gets a store failure (the watch has stopped then).
 * @returns a promise that resolves once the watch has stopped.
 */
export function watchBindings(
  store: EventStore,
  workspaceId: string,
  afterRevision: number,
  send: (change: BindingsChanged) => void,
  signal: AbortSignal,
  onError: (err: Error) => void,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const sub = store.subscribeToStream(streamOf(workspaceId), {
      after: afterRevision,
      onEvent: (e) => {
        const change = bindingChangeOf(e);
        if (change) send(change);
      },
      onError: (err) => {
        signal.removeEventListener("abort", stop);
        onError(err);
        resolve();
      },
    });
    const stop = () => void sub.close().then(resolve, resolve);
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
  });
}
