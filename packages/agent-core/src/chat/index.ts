/** Built-in agent chats: events, their fold (the chat projection) and the chat decider. */
export * from "./decide.ts";
export * from "./errors.ts";
export * from "./events.ts";
export * from "./state.ts";
