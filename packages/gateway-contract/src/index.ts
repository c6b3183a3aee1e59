/**
 * @gatehouse/gateway-contract: the HTTP/JSON and server-sent-events contract between the gateway
 * (`services/gateway`) and its clients (the approver web app `web/`, scripts). Types describe
 * response bodies; zod schemas validate request bodies on the gateway. No I/O here, and nothing
 * Node-specific, so the browser bundle can import it.
 *
 * Every route lives under `/api` and needs `Authorization: Bearer <token>` (an OIDC access/ID token
 * from the configured issuer, or a dev token in `gatehouse dev`). Errors are `ApiError` bodies with
 * status 400 (bad input), 401 (no or bad token), 403 (role may not), 404, 409 (conflict: the action
 * is no longer pending, undecided dependencies), 503 (a backend service is unreachable).
 *
 * Membership: a person reaches only the workspaces they own or were added to, whatever their
 * role. Every `/api/workspaces/:ws/...` route answers 403 to anyone else, naming the workspace and
 * its owner (who can add them); `/api/inbox`, `/api/workspaces` and `/api/events` carry only the
 * workspaces the person reaches.
 */
import { z } from "zod";
import type { Caller } from "./caller.ts";
import type { ConnectionRequest } from "./connections.ts";

export * from "./caller.ts";
export * from "./chats.ts";
export * from "./connections.ts";
export * from "./executions.ts";
export * from "./invisible.ts";
export * from "./notifications.ts";

/**
 * A person's role, applied within the workspaces they reach (own or were added to): `approver`
 * decides actions, `auditor` reads everything there and decides nothing, `admin` also sets
 * auto-approval rules. No role reaches a workspace the person is not a member of.
 */
export type Role = "approver" | "auditor" | "admin";

/** GET /api/me */
export interface Me {
  /** Stable id of the person (OIDC `sub`, or the dev token's subject). Recorded as `decidedBy`. */
  subject: string;
  /** Display name (OIDC `name`/`email`, else the subject). */
  name: string;
  roles: Role[];
  /** approver or admin. */
  canDecide: boolean;
  /** admin. */
  canSetRules: boolean;
}

/**
 * GET /api/config — the only route that needs no token: how the web app signs people in.
 * `oidc` is present when the gateway is configured for browser sign-in (OIDC authorization code
 * flow with PKCE, RFC 7636): the web app redirects to `issuer`, and sends the ID token it gets back
 * as its bearer token (the gateway's OIDC audience is then `clientId`).
 */
export interface ClientConfig {
  oidc: { issuer: string; clientId: string; scope: string } | null;
  /** Whether pasted (dev) tokens are accepted. */
  devTokens: boolean;
}

/** Lifecycle state of an action, as the action-log projection has it. */
export type ActionStatus = "pending" | "approved" | "applying" | "applied" | "failed" | "rejected";

/** One action (a write held for approval) as the projection has it. Ids are log ids (stream positions). */
export interface Action {
  id: number;
  workspaceId: string;
  binding: string;
  /** The gatekeeper's provisional id the agent saw (e.g. "~3"). */
  localId: string;
  title: string;
  /** Markdown written by the gatekeeper from the staged payload; untrusted text is fenced. Render inert. */
  description: string;
  /** false: the description was cut to its bound; the approver is not seeing everything. */
  descriptionIsComplete: boolean;
  delivery: "simulate" | "await";
  /** Action ids this one depends on (direct). */
  dependsOn: number[];
  status: ActionStatus;
  caller: Caller;
  /** For an agent caller: "user:<subject>" who started that chat (its ChatStarted); "" when unknown. */
  chatStartedBy: string;
  /** The execution (= turn) that submitted it. */
  executionId: string;
  /** ISO-8601. */
  submittedAt: string;
  decidedBy: string;
  decidedAt: string;
  /** Rejection reason, or the gatekeeper's failure message. Cascades read "needed action N, which did not complete: …". */
  reason: string;
  /** The action whose rejection or failure rejected this one (0 = none). */
  cascadedFrom: number;
  /** The gatekeeper's apply result (JSON text), when applied. */
  resultJson: string;
  /** A claim was left by a crash: nobody knows whether it reached the external system. */
  outcomeUnknown: boolean;
  actionKind: { tag: string; label: string } | null;
  autoApprovable: boolean;
  /** The write sends data out of the company (refused once the workspace is latched). */
  egress: boolean;
  /** Action id this one reverts (0 = none). */
  implementsRevert: number;
  /** Stream revision of the last event that changed this action. */
  lastRevision: number;
  /** The gatekeeper's one-line summary, e.g. "Write 12 lines to docs/a.md"; "" when it gives none. */
  summary: string;
  /** The arguments that tell actions of one kind apart, one line each (review tables' columns). */
  fields: ActionField[];
  /** Why this action needs a careful look; empty when nothing was flagged. */
  risks: ActionRisk[];
  /** Problems the gatekeeper found before approval (e.g. "parent directory docs/ does not exist"). */
  preflightWarnings: string[];
  /** The first lines (≤ 3 lines, ≤ 300 characters) of the action's main text. Untrusted: render as text. */
  preview: string;
  /** Digest of the description as shown; send it back with an approval to approve only what was seen. */
  descriptionDigest: string;
  /** "user:<subject>" who withdrew this action's approval ("" = not withdrawn). */
  withdrawnBy: string;
}

/** One key argument of an action, e.g. {name: "path", value: "docs/a.md"}; value is one line. */
export interface ActionField {
  name: string;
  value: string;
}

/** Why an action needs a careful look; `kind` is "destructive", "egress", "irreversible" or "content". */
export interface ActionRisk {
  kind: string;
  /** One line for the approver, e.g. "text holds `DROP TABLE customers` (line 7)". */
  reason: string;
}

/**
 * `descriptionDigests` of approve bodies: action id (decimal) → the digest the client showed. When
 * given, every approved action (dependencies pulled in included) needs its digest, else 409 naming
 * the action and nothing is approved.
 */
const DescriptionDigests = z
  .record(
    z.string().regex(/^[1-9][0-9]{0,14}$/, 'descriptionDigests keys are action ids, e.g. "12"'),
    z.string({ error: "a description digest is a string, as the action's descriptionDigest" }).min(1),
    { error: 'descriptionDigests maps action ids to digests, e.g. {"12": "<descriptionDigest>"}' },
  )
  .optional();

/** One read, recorded before its data was returned. */
export interface Observation {
  id: number;
  binding: string;
  title: string;
  description: string;
  /** Gatekeeper-specific read kind, e.g. "readFile". */
  kind: string;
  /** Page number of a paged read (0 = not paged). */
  page: number;
  containsRestrictedData: boolean;
  caller: Caller;
  /** For an agent caller: "user:<subject>" who started that chat (its ChatStarted); "" when unknown. */
  chatStartedBy: string;
  recordedAt: string;
  executionId: string;
}

/** A write refused at submission (nothing was staged), e.g. an egress write after the latch. */
export interface Refusal {
  id: number;
  binding: string;
  localId: string;
  title: string;
  description: string;
  reason: string;
  caller: Caller;
  /** For an agent caller: "user:<subject>" who started that chat (its ChatStarted); "" when unknown. */
  chatStartedBy: string;
  refusedAt: string;
  executionId: string;
}

/** One record of the log, in log-id order. */
export type LogEntry =
  | { id: number; kind: "observation"; observation: Observation }
  | { id: number; kind: "action"; action: Action }
  | { id: number; kind: "refusal"; refusal: Refusal };

/** An enabled auto-approval rule. */
export interface AutoApprovalRule {
  binding: string;
  actionKindTag: string;
}

/** A workspace summary with its membership. */
export interface WorkspaceSummary {
  id: string;
  name: string;
  /** "user:<subject>" of its owner (who may add members and remove bindings); "" when nobody owns it. */
  owner: string;
  /** "user:<subject>" of each member the owner added, in the order added (not the owner). */
  members: string[];
}

/**
 * GET /api/workspaces — the workspaces the signed-in person owns or was added to (a person reaches
 * only those, whatever their role), in creation order.
 */
export interface WorkspacesResponse {
  workspaces: WorkspaceSummary[];
}

/**
 * A person as membership names them: "user:" and the subject of their sign-in token (OIDC `sub`,
 * or the dev token's subject), printable ASCII without spaces, e.g. "user:dev-approver".
 */
export const PersonId = z
  .string({ error: 'a person is "user:<subject>", e.g. "user:dev-approver"' })
  .regex(
    /^user:[\x21-\x7e]{1,255}$/,
    'a person is "user:" and the subject of their sign-in token (printable, no spaces), e.g. "user:dev-approver"',
  );

/**
 * POST /api/workspaces — creates a workspace owned by the signed-in person (any role), with
 * `members` added at once. Answers 201 with its {@link WorkspaceSummary}.
 */
export const CreateWorkspaceBody = z
  .object(
    {
      name: z
        .string({ error: 'name is text, e.g. {"name": "payments"}' })
        .trim()
        .max(200, "a name is at most 200 characters")
        .default(""),
      members: z
        .array(PersonId, { error: 'members is a list of people, e.g. ["user:dev-auditor"]' })
        .max(100, "at most 100 members at creation; add more with POST /api/workspaces/:ws/members")
        .default([]),
    },
    { error: 'send a JSON object, e.g. {"name": "payments", "members": ["user:dev-auditor"]}' },
  )
  .strict();
export type CreateWorkspaceBody = z.input<typeof CreateWorkspaceBody>;

/**
 * GET /api/workspaces/:ws/members (any member) — who reaches the workspace. POST and POST
 * .../members/remove (the owner only) answer the same shape after adding or removing.
 */
export interface MembersResponse {
  workspaceId: string;
  /** "user:<subject>"; "" when nobody owns it. */
  owner: string;
  members: string[];
}

/**
 * POST /api/workspaces/:ws/members (the owner only) — adds a person; 409 when they own it or are a
 * member already (nothing is recorded).
 */
export const AddMemberBody = z
  .object({ member: PersonId }, { error: 'send a JSON object, e.g. {"member": "user:dev-auditor"}' })
  .strict();
export type AddMemberBody = z.input<typeof AddMemberBody>;

/**
 * POST /api/workspaces/:ws/members/remove (the owner only) — takes a member's access back: their
 * open event streams drop the workspace and every later request of theirs is refused; what they
 * did stays in the log. 404 when they are not a member, 409 for the owner (nothing is recorded).
 */
export const RemoveMemberBody = z
  .object({ member: PersonId }, { error: 'send a JSON object, e.g. {"member": "user:dev-auditor"}' })
  .strict();
export type RemoveMemberBody = z.input<typeof RemoveMemberBody>;

/** One workspace in the inbox. */
export interface InboxWorkspace {
  id: string;
  name: string;
  /** Stream revision the lists were read at (a notice with a higher revision means re-read). */
  revision: number;
  latched: boolean;
  /** Pending actions in submission (id) order. */
  pending: Action[];
  /** Up to `INBOX_RECENT` most recently changed non-pending actions, newest first. */
  recent: Action[];
  /** Pending connection requests (an agent asks for a resource), oldest first. */
  connectionRequests: ConnectionRequest[];
}

/** How many decided actions per workspace the inbox returns in `recent`. */
export const INBOX_RECENT = 50;

/** GET /api/inbox[?workspace=<id>] — every workspace the person may see, or just one. */
export interface InboxResponse {
  workspaces: InboxWorkspace[];
}

/** GET /api/workspaces/:ws/actions/:id */
export interface ActionDetail {
  action: Action;
  /** Direct dependencies. */
  dependencies: Action[];
  /** Actions that depend on this one directly. */
  dependents: Action[];
  /** Transitive dependencies still pending, in submission order: "approve with N earlier" includes these. */
  undecidedDependencies: number[];
  /** Observations of the same execution (turn) recorded before this action, in log order. */
  readBefore: Observation[];
  revision: number;
}

/** POST /api/workspaces/:ws/actions/:id/approve */
export const ApproveBody = z
  .object(
    {
      /** Also approve every undecided (transitive) dependency, earliest first. */
      includeDependencies: z.boolean({ error: "includeDependencies must be true or false" }).default(false),
      descriptionDigests: DescriptionDigests,
    },
    { error: 'send a JSON object, e.g. {"includeDependencies": false}' },
  )
  .strict();
export type ApproveBody = z.input<typeof ApproveBody>;

/** POST /api/workspaces/:ws/actions/:id/reject — a reason is required. */
export const RejectBody = z
  .object(
    {
      reason: z
        .string({
          error: 'a reason is required: send {"reason": "why"} so the agent and auditors can read it',
        })
        .trim()
        .min(1, "a reason is required: say why so the agent and auditors can read it")
        .max(2000, "a reason is at most 2000 characters"),
    },
    { error: 'send a JSON object, e.g. {"reason": "why"}' },
  )
  .strict();
export type RejectBody = z.input<typeof RejectBody>;

/**
 * POST /api/workspaces/:ws/approve-batch — applied in submission order whatever the order given.
 * With `returnOnceRecorded`, the answer comes once the approvals are recorded (the actions come back
 * approved) and the outcomes arrive as live notices (ActionApplied, ActionApplyFailed,
 * ActionRejected); without it, once every approved action is applied or failed.
 */
export const ApproveBatchBody = z
  .object(
    {
      actionIds: z
        .array(
          z
            .number({ error: "action ids are numbers" })
            .int("action ids are whole numbers")
            .positive("action ids are positive"),
          {
            error: 'actionIds is required: a list of action ids, e.g. {"actionIds": [4, 5]}',
          },
        )
        .min(1, "name at least one action id")
        .max(1000, "at most 1000 action ids per batch"),
      returnOnceRecorded: z.boolean({ error: "returnOnceRecorded is true or false" }).optional(),
      descriptionDigests: DescriptionDigests,
    },
    { error: 'send a JSON object, e.g. {"actionIds": [4, 5]}' },
  )
  .strict();
export type ApproveBatchBody = z.input<typeof ApproveBatchBody>;

/**
 * POST /api/workspaces/:ws/withdraw — withdraw approvals not yet claimed for apply (their approved
 * dependents with them). An action already applying or applied answers 409 naming it.
 */
export const WithdrawBody = z
  .object(
    {
      actionIds: z
        .array(
          z
            .number({ error: "action ids are numbers" })
            .int("action ids are whole numbers")
            .positive("action ids are positive"),
          { error: 'actionIds is required: a list of action ids, e.g. {"actionIds": [4, 5]}' },
        )
        .min(1, "name at least one action id")
        .max(1000, "at most 1000 action ids per withdrawal"),
      reason: z
        .string({ error: "reason is text" })
        .max(2000, "a reason is at most 2000 characters")
        .default(""),
    },
    { error: 'send a JSON object, e.g. {"actionIds": [4], "reason": "not yet"}' },
  )
  .strict();
export type WithdrawBody = z.input<typeof WithdrawBody>;

/** Response of approve, reject and approve-batch: every action the decision changed, as it stands now. */
export interface DecisionResult {
  actions: Action[];
}

/**
 * GET /api/workspaces/:ws/log[?until=<revision>] — the log, live or replayed as of a past revision;
 * or one page of the live log: `?limit=<1..5000>[&after=<log id>]`.
 */
export interface LogResponse {
  workspaceId: string;
  /** Revision this view is as of. */
  revision: number;
  /** The stream's current revision (the slider's maximum). */
  headRevision: number;
  latched: boolean;
  rules: AutoApprovalRule[];
  entries: LogEntry[];
  /** Paged requests only: pass as `after` for the next page; 0 when this page is the last. */
  nextAfter?: number;
}

/**
 * One kind of action a binding can submit, as its gatekeeper published it: a rule (PUT rules) may
 * be enabled only when `autoApprovable`; otherwise `notAutoApprovableReason` says why never.
 */
export interface BindingActionKind {
  tag: string;
  label: string;
  autoApprovable: boolean;
  /** Empty when `autoApprovable`. */
  notAutoApprovableReason: string;
}

/** GET /api/workspaces/:ws/bindings */
export interface BindingsResponse {
  bindings: Array<{
    name: string;
    url: string;
    gatekeeper: string;
    trust: string;
    /**
     * Every kind of action the binding can submit; null for a binding introduced before
     * gatekeepers published them (no rule can be enabled on it until it is introduced again).
     */
    actionKinds: BindingActionKind[] | null;
  }>;
}

/**
 * POST /api/workspaces/:ws/bindings/:binding/remove (the workspace's owner only, whatever their
 * role) — takes the binding back: later executions
 * have no `env.<binding>`, a running one's next call on it fails, its pending and approved (not yet
 * applying) actions are rejected "binding removed" and their dependents cascade. 404 when the
 * workspace or binding does not exist (e.g. already removed).
 */
export const RemoveBindingBody = z
  .object(
    {
      reason: z
        .string({ error: 'reason is text, e.g. {"reason": "contractor left"}' })
        .trim()
        .max(500, "a reason is at most 500 characters")
        .default(""),
    },
    { error: 'send a JSON object, e.g. {"reason": "contractor left"} (the reason is optional)' },
  )
  .strict();
export type RemoveBindingBody = z.input<typeof RemoveBindingBody>;

/** Response of removing a binding. */
export interface RemoveBindingResult {
  binding: string;
  /** Actions rejected "binding removed", in id order. */
  rejected: number[];
  /** Their dependents rejected by cascade, in id order. */
  cascaded: number[];
}

/** PUT /api/workspaces/:ws/rules (admin, and a member of the workspace) */
export const SetRuleBody = z
  .object(
    {
      binding: z
        .string({ error: "binding is required, e.g. MEMORY" })
        .min(1, "binding is required, e.g. MEMORY"),
      actionKindTag: z
        .string({ error: "actionKindTag is required, e.g. mcp.tool.create_directory" })
        .regex(
          /^[A-Za-z0-9_.:-]{1,128}$/,
          "actionKindTag is an action kind's tag as actions carry it (letters, digits, '.', '_', ':', '-'), e.g. mcp.tool.create_directory",
        ),
      enabled: z.boolean({ error: "enabled must be true or false" }),
    },
    {
      error:
        'send a JSON object, e.g. {"binding": "MEMORY", "actionKindTag": "mcp.tool.create_entities", "enabled": true}',
    },
  )
  .strict();
export type SetRuleBody = z.input<typeof SetRuleBody>;

/** Response of PUT rules: actions auto-approved by the rule right away. */
export interface SetRuleResponse {
  drained: Action[];
}

/** Error body of every non-2xx response. */
export interface ApiError {
  error: { code: string; message: string };
}

/**
 * GET /api/events — server-sent events (text/event-stream), only for the workspaces the signed-in
 * person reaches (own or were added to). Event names:
 * - `notice`: data `LogNotice` — the workspace's stream changed; re-read what shows it.
 * - `chat-delta`: data `ChatDelta` — the built-in agent's model text as it streams (see chats.ts).
 * - `resync`: data `{reason}` — notices may have been missed (the gateway's NATS connection came
 *   back, or the client reconnected), or the person now reaches another workspace (they were added
 *   to it, or created it): re-read everything.
 * A comment line is sent every 15 s as a heartbeat.
 */
export interface LogNotice {
  workspaceId: string;
  /** Stream revision of the event. */
  revision: number;
  /** Event type, e.g. "ActionSubmitted". */
  type: string;
  /**
   * When the approval service published the notice, ms since the epoch (absent from older publishers).
   * The gateway measures notice → browser latency from it.
   */
  publishedAtMs?: number;
}
