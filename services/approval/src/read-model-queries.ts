/**
 * Decisions read RPCs answered from the read model (@gatehouse/read-model): GetInbox,
 * GetActionDetail, GetLogPage. Request checks live here; every answer reflects the events stored
 * before the call (the read model waits for its projector to reach the store's head).
 */
import { InvalidField } from "@gatehouse/approval-core";
import type {
  ActionDetailView,
  GetActionDetailRequest,
  GetInboxRequest,
  GetInboxResponse,
  GetLogPageRequest,
  LogPage,
} from "@gatehouse/proto";
import type { ReadModel } from "@gatehouse/read-model";

/** Most workspaces one GetInbox names. */
export const MAX_INBOX_WORKSPACES = 1000;
/** Most decided actions per workspace one GetInbox returns. */
export const MAX_INBOX_RECENT = 500;
/** GetLogPage's limit bounds (approval.proto): 0 means DEFAULT_LOG_PAGE. */
export const MAX_LOG_PAGE = 5000;
export const DEFAULT_LOG_PAGE = 500;

/**
 * The inbox of the named workspaces, in request order (unknown ids left out).
 * @throws InvalidField for no ids, an empty id, more than MAX_INBOX_WORKSPACES ids or a
 *   recent_limit outside 0..MAX_INBOX_RECENT; ReadModelBehind when the projector lags.
 */
export async function getInbox(readModel: ReadModel, req: GetInboxRequest): Promise<GetInboxResponse> {
  if (req.workspaceIds.length === 0)
    throw new InvalidField("workspace_ids", "name at least one workspace id");
  if (req.workspaceIds.length > MAX_INBOX_WORKSPACES)
    throw new InvalidField(
      "workspace_ids",
      `at most ${MAX_INBOX_WORKSPACES} per call (got ${req.workspaceIds.length}); split the request`,
    );
  if (req.workspaceIds.some((id) => !id)) throw new InvalidField("workspace_ids", "an id is empty");
  if (req.recentLimit < 0 || req.recentLimit > MAX_INBOX_RECENT)
    throw new InvalidField("recent_limit", `must be 0..${MAX_INBOX_RECENT} (got ${req.recentLimit})`);
  return { workspaces: await readModel.inbox([...new Set(req.workspaceIds)], req.recentLimit) };
}

/** @throws InvalidField for an empty workspace id or an action id < 1; WorkspaceNotFound, ActionNotFound. */
export async function getActionDetail(
  readModel: ReadModel,
  req: GetActionDetailRequest,
): Promise<ActionDetailView> {
  if (!req.workspaceId) throw new InvalidField("workspace_id", "set the workspace id");
  if (req.actionId < 1)
    throw new InvalidField("action_id", `must be a log id (1 or more), got ${req.actionId}`);
  return readModel.actionDetail(req.workspaceId, req.actionId);
}

/** @throws InvalidField for an empty workspace id, a negative after_id or a limit outside 0..MAX_LOG_PAGE; WorkspaceNotFound. */
export async function getLogPage(readModel: ReadModel, req: GetLogPageRequest): Promise<LogPage> {
  if (!req.workspaceId) throw new InvalidField("workspace_id", "set the workspace id");
  if (req.afterId < 0) throw new InvalidField("after_id", `must be 0 or a log id, got ${req.afterId}`);
  if (req.limit < 0 || req.limit > MAX_LOG_PAGE)
    throw new InvalidField(
      "limit",
      `must be 1..${MAX_LOG_PAGE}, or 0 for ${DEFAULT_LOG_PAGE} (got ${req.limit})`,
    );
  return readModel.logPage(req.workspaceId, req.afterId, req.limit || DEFAULT_LOG_PAGE);
}
