/** Typed errors of the chat decider; each message names what was wrong and how to go on. */

/** Base class: callers map it to a status (kernel: INVALID_ARGUMENT / NOT_FOUND / FAILED_PRECONDITION). */
export class ChatError extends Error {
  override name = "ChatError";
}

/** Bad input (empty or oversized text, a malformed id). */
export class ChatInvalid extends ChatError {
  override name = "ChatInvalid";
}

/** No built-in agent chat with this id in the workspace. */
export class ChatNotFound extends ChatError {
  override name = "ChatNotFound";
  constructor(readonly chatId: string) {
    super(
      `chat "${chatId}" does not exist in this workspace; list the workspace's chats to find it, or start a new one`,
    );
  }
}

/** A chat id already started (by any surface). */
export class ChatExists extends ChatError {
  override name = "ChatExists";
  constructor(readonly chatId: string) {
    super(`chat "${chatId}" already exists in this workspace; pick another id or send a message to it`);
  }
}

/** A message arrived while a turn of the chat has not ended. */
export class TurnInProgress extends ChatError {
  override name = "TurnInProgress";
  constructor(readonly turnId: string) {
    super(
      `turn ${turnId} of this chat has not ended yet; wait for it, or cancel it, then send the message again`,
    );
  }
}

/** The turn named does not exist, or has ended. */
export class TurnNotOpen extends ChatError {
  override name = "TurnNotOpen";
  constructor(
    readonly turnId: string,
    why: string,
  ) {
    super(`turn ${turnId} ${why}`);
  }
}

/** Only the person who started the chat may write to it. */
export class NotChatOwner extends ChatError {
  override name = "NotChatOwner";
  constructor(chatId: string, startedBy: string) {
    super(`chat "${chatId}" belongs to ${startedBy}; only they send messages to it or cancel its turns`);
  }
}
