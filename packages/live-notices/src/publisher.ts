/**
 * The change-notice publisher: follows the event store and publishes one notice per event of a
 * `workspace-<id>` stream. The approval service runs it (an adapter: NATS publisher).
 */
import type { EventStore, Subscription } from "@gatehouse/event-store";
import type { NoticeBus } from "./bus.ts";

const WORKSPACE_STREAM = /^workspace-(.+)$/;

/** Options of {@link publishLogNotices}. */
export interface PublishLogNoticesOptions {
  /** Called when a notice could not be published (e.g. a workspace id that is not a subject token). */
  onError?: (error: Error) => void;
}

/**
 * Publishes a {@link LogNotice} for every event appended from now on to a `workspace-<id>` stream
 * (in-process appends are seen at once, other processes' within the store's poll interval).
 * Events of other streams are skipped. Returns the store subscription; `close()` stops publishing.
 */
export async function publishLogNotices(
  store: EventStore,
  bus: NoticeBus,
  options: PublishLogNoticesOptions = {},
): Promise<Subscription> {
  const after = await store.headPosition();
  return store.subscribeToAll({
    after,
    onEvent(event) {
      const match = WORKSPACE_STREAM.exec(event.streamId);
      if (!match?.[1]) return;
      try {
        bus.publish({
          workspaceId: match[1],
          revision: event.revision,
          type: event.type,
          publishedAtMs: Date.now(),
        });
      } catch (err) {
        options.onError?.(err instanceof Error ? err : new Error(String(err)));
      }
    },
    onError: (err) => options.onError?.(err),
  });
}
