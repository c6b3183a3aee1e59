import { Visible } from "./Visible.tsx";

/**
 * " for dev-approver" after an agent caller: the person who started that chat (the record's
 * `chatStartedBy`, "user:<subject>", shown without "user:"); nothing when it is unknown.
 */
export function ChatOwner({ startedBy }: { startedBy: string }) {
  if (!startedBy) return null;
  return (
    <span className="chat-owner" title={`the agent chat was started by ${startedBy}`}>
      {" for "}
      <Visible text={startedBy.replace(/^user:/, "")} />
    </span>
  );
}
