/**
 * A bounded retry of one gRPC call whose reply did not come back (UNAVAILABLE: the request may not
 * have been sent; DEADLINE_EXCEEDED: it may have been processed and the reply lost). Only for
 * calls that are safe to repeat: the approval service recognizes a retried SubmitAction by its
 * local id and a retried AuthorizeObservation by its request id, and answers with what it recorded.
 */
import { type ServiceError, status } from "@grpc/grpc-js";

/** How calls are retried. */
export interface RetryPolicy {
  /** Attempts per call, the first included (integer ≥ 1). */
  attempts: number;
  /** Deadline of each attempt, in milliseconds. */
  attemptTimeoutMs: number;
  /** Wait before the first retry, in milliseconds; doubled for each later one, at most 5000. */
  backoffMs: number;
}

/** 4 attempts of at most 60 s each, retried after 0.2 s, 0.4 s, 0.8 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { attempts: 4, attemptTimeoutMs: 60_000, backoffMs: 200 };

/** Status codes after which the reply was lost or the request never arrived. */
const RETRYABLE = new Set<number>([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]);

/**
 * Runs `attempt(deadline)` until it resolves, fails with a status other than UNAVAILABLE /
 * DEADLINE_EXCEEDED, or `policy.attempts` attempts failed; each attempt gets its own deadline.
 * @returns the first successful reply.
 * @throws the last attempt's ServiceError, with `attempts` set to the number of attempts made.
 */
export async function withRetries<Res>(
  policy: RetryPolicy,
  attempt: (deadline: Date) => Promise<Res>,
): Promise<Res> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(new Date(Date.now() + policy.attemptTimeoutMs));
    } catch (err) {
      const code = (err as Partial<ServiceError>).code;
      if (n >= policy.attempts || code === undefined || !RETRYABLE.has(code)) {
        throw Object.assign(err as Error, { attempts: n });
      }
      const wait = Math.min(5_000, policy.backoffMs * 2 ** (n - 1));
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/**
 * Checks a caller-supplied policy. @throws Error naming the field and what it must be.
 */
export function checkRetryPolicy(p: RetryPolicy): RetryPolicy {
  if (!Number.isInteger(p.attempts) || p.attempts < 1)
    throw new Error(`retry.attempts must be an integer ≥ 1 (got ${p.attempts})`);
  if (!(p.attemptTimeoutMs > 0))
    throw new Error(
      `retry.attemptTimeoutMs must be a positive number of milliseconds (got ${p.attemptTimeoutMs})`,
    );
  if (!(p.backoffMs >= 0)) throw new Error(`retry.backoffMs must be ≥ 0 milliseconds (got ${p.backoffMs})`);
  return p;
}
