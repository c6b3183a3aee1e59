/**
 * The logging the kit needs: a pino `Logger` fits this shape, so does a no-op. Entries are
 * structured (`component`, `event` fields); the kit never logs tokens, frames or external data.
 */
export interface KitLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** A logger that drops everything (the default when none is given). */
export const silentLogger: KitLogger = { info() {}, warn() {} };
