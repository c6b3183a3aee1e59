/** The wall-time limits an agent chooses within, seconds (the kernel's default and ceiling). */

/** Wall time of a snippet when `timeout_seconds` is not given, seconds (the kernel's default). */
export const DEFAULT_TIMEOUT_SECONDS = 10;
/** Largest `timeout_seconds`: the kernel's ceiling (5 minutes). */
export const MAX_TIMEOUT_SECONDS = 300;
