import { ApiRequestError } from "../api.ts";

/** Whether `e` is the gateway refusing this person the workspace (or the action) with a 403. */
export function isForbidden(e: unknown): boolean {
  return e instanceof ApiRequestError && e.status === 403;
}

/**
 * Shown instead of "Loading…" when the gateway refused to show the page (403): the banner above
 * carries its message (e.g. not a member of the workspace, and who can add them). The page reloads
 * by itself once the person is let in (the event stream then asks for a resync).
 */
export function NoAccess({ workspaceId }: { workspaceId: string }) {
  return (
    <p className="muted" data-testid="no-access">
      Workspace {workspaceId} is not open to you (see the message above). Once its owner adds you, this page
      loads by itself.
    </p>
  );
}
