/**
 * @gatehouse/live-notices: live change notices (`gatehouse.ws.<id>.log`) — the bus port, its
 * in-process and NATS implementations, and the publisher that follows the event store.
 * Notices say "re-read"; they carry no state. Chat deltas (the agent's model text as it streams)
 * ride the same bus on `gatehouse.ws.<id>.chat-delta` and are never stored. docs/architecture.md "Events: the source of truth": the stream is the truth.
 */
export { InProcessNoticeBus, type NoticeBus, type NoticeListener } from "./bus.ts";
export { connectNatsNoticeBus, type NatsNoticeBusOptions, NatsUnreachable } from "./nats-bus.ts";
export { type PublishLogNoticesOptions, publishLogNotices } from "./publisher.ts";
export {
  ALL_CHAT_DELTA_SUBJECTS,
  ALL_LOG_SUBJECTS,
  ChatDeltaSchema,
  chatDeltaSubject,
  InvalidSubjectToken,
  LogNoticeSchema,
  logSubject,
} from "./subjects.ts";
