/**
 * CheckObserver for git: strategy B (docs/architecture.md "The approval contract"), a single-resource ACL check. A person
 * may observe a binding only if their own credential can read the repository: `git ls-remote`
 * against the remote with that credential ("username:token" for https), used for this one check
 * and never stored or logged.
 *
 * Local (git+file) repositories and ssh remotes are refused: the gatekeeper cannot check a
 * person's access to them with a credential they hand over.
 */
import type { CheckObserverRequest, CheckObserverResponse } from "@gatehouse/proto";
import { GitFailed, git } from "./git.ts";
import { authEnv } from "./remotes.ts";
import { parseGitResource, type ResourcePolicy } from "./resource-url.ts";

/** Timeout of the check, milliseconds. */
export const OBSERVER_CHECK_TIMEOUT_MS = 20_000;

/** Decides whether `req.observer` may observe the repository of `req.url`. @throws InvalidResourceUrl. */
export async function checkObserver(
  req: CheckObserverRequest,
  policy: ResourcePolicy,
): Promise<CheckObserverResponse> {
  const resource = parseGitResource(req.url, policy);
  const who = req.observer.replace(/[^A-Za-z0-9:@._-]/g, "?").slice(0, 100);
  if (!resource.remote) {
    return {
      allowed: false,
      reason: `B: ${resource.repoPath.split("/").pop()} is a local repository; the gatekeeper cannot check a person's own access to it, so it is not shared`,
    };
  }
  if (resource.remote.url.startsWith("ssh:")) {
    return {
      allowed: false,
      reason: "B: ssh remotes cannot be checked with a handed-over credential; share through the https URL",
    };
  }
  const colon = req.credential.indexOf(":");
  if (colon <= 0 || colon === req.credential.length - 1) {
    return {
      allowed: false,
      reason: `B: ${who} must give their own credential for this host as "username:token"`,
    };
  }
  const auth = {
    kind: "basic" as const,
    username: req.credential.slice(0, colon),
    token: req.credential.slice(colon + 1),
  };
  try {
    await git("", ["ls-remote", "--heads", "--end-of-options", resource.remote.url], {
      env: authEnv(auth),
      timeoutMs: OBSERVER_CHECK_TIMEOUT_MS,
    });
  } catch (e) {
    if (!(e instanceof GitFailed)) throw e;
    return { allowed: false, reason: `B: ${who}'s own credential cannot read the repository` };
  }
  return { allowed: true, reason: `B: ${who}'s own credential can read the repository` };
}
