/**
 * The harness's errors and exit codes. The codes are k6's, so a CI job reads them the same way
 * whichever runner ran the script: 99 thresholds failed, 104 invalid or unsupported configuration, 107
 * the script threw in its init context or setup().
 */

export const EXIT = { ok: 0, thresholdsFailed: 99, invalidConfig: 104, scriptException: 107 } as const;

/** Something in the script's options or API use the harness refuses (k6's "invalid config", exit 104). */
export class HarnessConfigError extends Error {
  override name = "HarnessConfigError";
  readonly exitCode = EXIT.invalidConfig;
}

/** The script itself failed: its init context or setup() threw (exit 107). */
export class ScriptError extends Error {
  override name = "ScriptError";
  readonly exitCode = EXIT.scriptException;
}

/** The phrase the VU side puts in every "the harness lacks this" error (vu/unsupported.js). */
export const UNSUPPORTED_MARK = "is not implemented by the Gatehouse k6 test harness";
