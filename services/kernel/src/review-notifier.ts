/**
 * Tells people a batch of writes waits for their review, once per turn (docs/notifications.md).
 *
 * A subscriber to every stream of the store (catch-up, then live) that watches for the end of a turn:
 *   - `CodeExecuted` of an execution that is not a built-in agent's step (an MCP agent's
 *     execute_code, the CLI, a hook): that execution is the turn (`?execution=<id>`);
 *   - `ChatTurnEnded` of a built-in agent turn, or the `CodeExecuted` of one of its steps that
 *     suspended it (TurnSuspended: the turn waits for people): the turn (`?turn=<turnId>`).
 * When writes of that turn are still pending, it sends one notification (email and webhooks as each
 * member's preferences ask, @gatehouse/notify) and then appends `ReviewNotificationSent` to its own
 * stream `review-notifications`. That stream is the record and the checkpoint: a restarted kernel
 * resumes after the largest `trigger_position` and skips turns already notified, so a restart never
 * sends twice (a crash between the sends and the append sends again: at least once). Without the
 * stream (notifications just turned on) it starts at the store's head: history is never notified.
 * One notifier runs per installation: with several kernel replicas on PostgreSQL, only the holder of an
 * advisory lock runs it (KernelOptions.notifyLeaderUrl); another takes over from the stream when it goes.
 */
import type { ActionState, WorkspaceStreams } from "@gatehouse/approval-core";
import {
  type EventStore,
  type StoredEvent,
  StoreUnavailable,
  StreamNotFound,
  type Subscription,
} from "@gatehouse/event-store";
import { dispatchWaitingBatch, type NotifyConfig, type WaitingBatch } from "@gatehouse/notify";
import {
  ActionStatus,
  ChatToolCalled,
  ChatTurnEnded,
  CodeExecuted,
  ReviewNotificationSent,
  TurnSuspended,
} from "@gatehouse/proto";
import type { Logger } from "pino";
import type { KernelMetrics } from "./metrics.ts";
import { preferencesOf } from "./notification-preferences.ts";
import type { Workspaces } from "./workspaces.ts";

/** The notifier's own stream: one ReviewNotificationSent per notified turn. */
export const REVIEW_NOTIFICATIONS_STREAM = "review-notifications";

/** How many of the latest ReviewNotificationSent events are read at start to skip turns already notified. */
const REMEMBERED = 1000;
/** Wait before subscribing again after a failure (e.g. the store was unreachable), ms. */
const RETRY_MS = 1000;

/** Streams of workspaces: `workspace-<id>`. */
const WORKSPACE_STREAM_PREFIX = "workspace-";

export interface ReviewNotifierOptions {
  store: EventStore;
  /** The approval projection: which of a turn's actions are still pending, their summaries and risks. */
  streams: WorkspaceStreams;
  /** Owners and members of a workspace: the people whose preferences are asked. */
  workspaces: Workspaces;
  config: NotifyConfig;
  logger: Logger;
  /** Counts each handled turn by outcome (absent: not counted). */
  metrics?: Pick<KernelMetrics, "reviewNotifications">;
}

type Selection = WaitingBatch["selection"];

/** The running notifier; {@link ReviewNotifier.close} stops it after the turn in hand. */
export class ReviewNotifier {
  private subscription: Subscription | undefined;
  private closed = false;
  /** Global position of the last event handled. */
  private cursor = 0;
  /** `<ws>\0execution:<id>` / `<ws>\0turn:<id>` of turns notified (the latest {@link REMEMBERED} and new ones). */
  private readonly sent = new Set<string>();
  /**
   * `<ws>\0<executionId>` → turn id, from ChatToolCalled (appended before the step runs). A step whose
   * ChatToolCalled lies before the checkpoint is taken for a plain execution.
   */
  private readonly agentSteps = new Map<string, string>();
  /** `<ws>\0<executionId>` of built-in agent steps that suspended their turn. */
  private readonly suspended = new Set<string>();
  private retry: NodeJS.Timeout | undefined;

  private constructor(private readonly options: ReviewNotifierOptions) {}

  /** Reads the checkpoint from `review-notifications` and subscribes after it. */
  static async start(options: ReviewNotifierOptions): Promise<ReviewNotifier> {
    const notifier = new ReviewNotifier(options);
    notifier.cursor = await notifier.checkpoint();
    options.logger.info(
      { event: "review_notifier_started", from: notifier.cursor },
      "review notifier started",
    );
    notifier.subscribe();
    return notifier;
  }

  /** Stops delivery; resolves when no turn is being handled. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.subscription?.close();
  }

  private async checkpoint(): Promise<number> {
    const { store } = this.options;
    let latest: StoredEvent[];
    try {
      latest = await store.readStream(REVIEW_NOTIFICATIONS_STREAM, {
        direction: "backwards",
        maxCount: REMEMBERED,
      });
    } catch (err) {
      if (err instanceof StreamNotFound) return store.headPosition();
      throw err;
    }
    let position = 0;
    for (const e of latest) {
      if (e.type !== "ReviewNotificationSent") continue;
      const n = ReviewNotificationSent.fromJSON(e.data);
      this.sent.add(
        n.turnId
          ? keyOf(n.workspaceId, { kind: "turn", turnId: n.turnId })
          : keyOf(n.workspaceId, execution(n)),
      );
      position = Math.max(position, n.triggerPosition);
    }
    return position;
  }

  private subscribe(): void {
    if (this.closed) return;
    this.subscription = this.options.store.subscribeToAll({
      after: this.cursor,
      onEvent: async (e) => {
        try {
          await this.handle(e);
        } catch (err) {
          // The store went away: stop here and read again from this event. Anything else concerns this one
          // turn (e.g. its workspace cannot be read): log it and go on, so one bad turn never holds up the rest.
          if (err instanceof StoreUnavailable) throw err;
          this.options.metrics?.reviewNotifications.inc({ outcome: "skipped" });
          this.options.logger.error(
            { event: "review_notification_skipped", at: e.globalPosition, err: (err as Error).message },
            "a turn's review notification was skipped",
          );
        }
        this.cursor = e.globalPosition;
      },
      onError: (err) => {
        this.options.logger.error(
          { event: "review_notifier_failed", err: err.message, at: this.cursor },
          "review notifier stopped; subscribing again",
        );
        this.retry = setTimeout(() => this.subscribe(), RETRY_MS);
      },
    });
  }

  private async handle(e: StoredEvent): Promise<void> {
    if (!e.streamId.startsWith(WORKSPACE_STREAM_PREFIX)) return;
    const ws = e.streamId.slice(WORKSPACE_STREAM_PREFIX.length);
    switch (e.type) {
      case "ChatToolCalled": {
        const c = ChatToolCalled.fromJSON(e.data);
        if (c.executionId) this.agentSteps.set(`${ws}\0${c.executionId}`, c.turnId);
        return;
      }
      case "TurnSuspended":
        this.suspended.add(`${ws}\0${TurnSuspended.fromJSON(e.data).turnId}`);
        return;
      case "CodeExecuted": {
        const id = CodeExecuted.fromJSON(e.data).executionId;
        const step = `${ws}\0${id}`;
        const turnId = this.agentSteps.get(step);
        this.agentSteps.delete(step);
        if (turnId === undefined) return this.notify(ws, { kind: "execution", executionId: id }, e);
        // A built-in agent's step: the turn goes on (notified when it ends) unless it now waits for people.
        if (this.suspended.delete(step)) return this.notify(ws, { kind: "turn", turnId }, e);
        return;
      }
      case "ChatTurnEnded":
        return this.notify(ws, { kind: "turn", turnId: ChatTurnEnded.fromJSON(e.data).turnId }, e);
    }
  }

  /** Sends for the turn when it has pending writes and was not notified yet, then records it. */
  private async notify(ws: string, selection: Selection, trigger: StoredEvent): Promise<void> {
    const key = keyOf(ws, selection);
    if (this.sent.has(key)) return;
    const { streams, workspaces, store, config, logger } = this.options;
    const state = await streams.state(ws);
    const pending: ActionState[] = [];
    for (const a of state.actions.values()) {
      if (a.status === ActionStatus.ACTION_STATUS_PENDING && inSelection(selection, a.executionId))
        pending.push(a);
    }
    if (pending.length === 0) return;
    const batch: WaitingBatch = {
      workspace: ws,
      selection,
      pending: pending.length,
      risky: pending.filter((a) => (a.description?.risks.length ?? 0) > 0).length,
      summaries: pending.map((a) => a.description?.summary || a.description?.title || `action ${a.id}`),
    };
    const workspace = await workspaces.load(ws);
    const people = [workspace.owner, ...workspace.members].filter(Boolean);
    const prefs = await Promise.all(people.map((p) => preferencesOf(store, p)));
    const result = await dispatchWaitingBatch(batch, prefs, config, {
      info: (o, m) => logger.info({ event: "review_notification", ...o }, m),
      warn: (o, m) => logger.warn({ event: "review_notification_failed", ...o }, m),
    });
    await store.append(
      REVIEW_NOTIFICATIONS_STREAM,
      [
        {
          type: "ReviewNotificationSent",
          data: ReviewNotificationSent.toJSON({
            workspaceId: ws,
            executionId: selection.kind === "execution" ? selection.executionId : "",
            turnId: selection.kind === "turn" ? selection.turnId : "",
            triggerPosition: trigger.globalPosition,
            pending: pending.length,
            emailed: result.emailed,
            webhooks: result.posted,
            failed: result.failed,
          }),
          metadata: { actor: "service:kernel", causationId: trigger.metadata.eventId },
        },
      ],
      "any",
    );
    this.sent.add(key);
    const outcome =
      result.failed.length > 0
        ? "failed"
        : result.emailed + result.posted.length === 0
          ? "no_recipient"
          : "delivered";
    this.options.metrics?.reviewNotifications.inc({ outcome });
  }
}

function execution(n: ReviewNotificationSent): Selection {
  return { kind: "execution", executionId: n.executionId };
}

function keyOf(ws: string, s: Selection): string {
  return s.kind === "execution" ? `${ws}\0execution:${s.executionId}` : `${ws}\0turn:${s.turnId}`;
}

/** Whether an action of `executionId` belongs to the turn (the web app's review selection, reviewPath.ts). */
function inSelection(s: Selection, executionId: string): boolean {
  return s.kind === "execution"
    ? executionId === s.executionId
    : executionId === s.turnId || executionId.startsWith(`${s.turnId}.`);
}
