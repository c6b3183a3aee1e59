export * from "./batch.js";
export * from "./config.js";
export * from "./dispatch.js";
export * from "./escape.js";
export * from "./messages.js";
export * from "./preferences.js";
export * from "./send.js";
