/**
 * @gatehouse/live-notices: live change notices (`gatehouse.ws.<id>.log`) — the bus port, its
 * in-process and NATS implementations, and the publisher that follows the event store.
 * Notices say "re-read"; they carry no state. DESIGN.md "Events": the stream is the truth.
 */
export { InProcessNoticeBus, type NoticeBus, type NoticeListener } from "./bus.ts";
export { connectNatsNoticeBus, type NatsNoticeBusOptions, NatsUnreachable } from "./nats-bus.ts";
export { type PublishLogNoticesOptions, publishLogNotices } from "./publisher.ts";
export { ALL_LOG_SUBJECTS, InvalidSubjectToken, LogNoticeSchema, logSubject } from "./subjects.ts";
