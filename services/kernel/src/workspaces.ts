/**
 * Workspaces and bindings: create, list, introduce a resource, describe bindings. All state is in
 * the event store (`workspace-<id>` streams). Each workspace's folded state is kept in a bounded
 * cache that is only ever a starting point: every load reads what the stream gained since, so
 * several kernel processes can share one store.
 */
import { randomBytes } from "node:crypto";
import type { EventStore, NewEvent } from "@gatehouse/event-store";
import { WrongExpectedRevision } from "@gatehouse/event-store";
import type { ResolveResourceRequest, Workspace } from "@gatehouse/proto";
import {
  MemberAdded,
  type ResolveResourceResponse,
  ResourceIntroduced,
  WorkspaceCreated,
} from "@gatehouse/proto";
import { Metadata } from "@grpc/grpc-js";
import { BindingAlreadyExists, InvalidArgument, WorkspaceNotFound } from "./domain/errors.ts";
import { checkPerson, reaches, workspaceOf } from "./domain/membership.ts";
import { emptyWorkspace, evolveWorkspace, streamOf, type WorkspaceState } from "./domain/workspace.ts";
import { type GatekeeperClients, gatekeeperKindFor } from "./gatekeepers.ts";

const WORKSPACE_ID = /^[a-z0-9][a-z0-9-]{2,62}$/;
const BINDING_NAME = /^[A-Z][A-Z0-9_]{0,62}$/;
/** Most workspace states the load cache keeps (least recently loaded dropped first). */
const CACHED_STATES = 2000;

/** A workspace with its owner and members (kernel.proto `Workspace`). */
export type WorkspaceSummary = Workspace;

/** What `create` is given. */
export interface NewWorkspace {
  /** Optional human name, at most 200 characters. */
  name: string;
  /** "user:<subject>" of its owner; "" for nobody (then `members` must be empty). */
  owner: string;
  /** "user:<subject>" of members added at once; duplicates and the owner are dropped. */
  members: string[];
}

/** Workspaces and their bindings over the event store, resolving resources with their gatekeepers. */
export class Workspaces {
  private readonly cache = new Map<string, WorkspaceState>();

  constructor(
    private readonly store: EventStore,
    private readonly gatekeepers: GatekeeperClients,
  ) {}

  /**
   * Creates a workspace with a fresh id (`w` + 10 hex digits): appends WorkspaceCreated{owner}
   * and one MemberAdded (added by the owner) per member, in one append.
   * @throws InvalidArgument naming the field: name longer than 200 characters, an owner or member
   *   not "user:<subject>", members without an owner.
   */
  async create(spec: NewWorkspace, actor: string): Promise<WorkspaceSummary> {
    const { name, owner } = spec;
    if (name.length > 200) throw new InvalidArgument("name must be at most 200 characters");
    if (owner) checkPerson("owner", owner);
    for (const [i, m] of spec.members.entries()) checkPerson(`members[${i}]`, m);
    const members = [...new Set(spec.members)].filter((m) => m !== owner);
    if (!owner && members.length > 0) {
      throw new InvalidArgument(
        'members were given without an owner; set owner ("user:<subject>"): owners add members',
      );
    }
    const id = `w${randomBytes(5).toString("hex")}`;
    const events: NewEvent[] = [
      {
        type: "WorkspaceCreated",
        data: WorkspaceCreated.toJSON({ workspaceId: id, name, owner }),
        metadata: { actor: owner || actor },
      },
      ...members.map((member) => ({
        type: "MemberAdded",
        data: MemberAdded.toJSON({ member, addedBy: owner }),
        metadata: { actor: owner },
      })),
    ];
    await this.store.append(streamOf(id), events, "no_stream");
    return { id, name, owner, members };
  }

  /**
   * Workspaces in creation order with their owner and members; with `person` ("user:<subject>"),
   * only those that person owns or is a member of.
   */
  async list(person = ""): Promise<WorkspaceSummary[]> {
    const ids = await this.store.listStreams("workspace-");
    const out: WorkspaceSummary[] = [];
    for (const streamId of ids) {
      const state = await this.loadStream(streamId);
      if (!state.id) continue;
      if (person && !reaches(state, person)) continue;
      out.push(workspaceOf(state));
    }
    return out;
  }

  /**
   * The current state of a workspace.
   * @throws WorkspaceNotFound when the id is malformed or has no stream.
   */
  async load(workspaceId: string): Promise<WorkspaceState> {
    if (!WORKSPACE_ID.test(workspaceId)) throw new WorkspaceNotFound(workspaceId);
    const state = await this.loadStream(streamOf(workspaceId));
    if (!state.id) throw new WorkspaceNotFound(workspaceId);
    return state;
  }

  /**
   * Folds a stream from its cached state (or from the start) up to the stream's current end.
   * An absent stream folds to the empty state (id "").
   */
  private async loadStream(streamId: string): Promise<WorkspaceState> {
    const cached = this.cache.get(streamId);
    const head = await this.store.streamRevision(streamId);
    if (head < 0) return emptyWorkspace();
    let state = cached ?? emptyWorkspace();
    if (state.revision < head) {
      const events = await this.store.readStream(streamId, { fromRevision: state.revision + 1 });
      state = events.reduce(evolveWorkspace, state);
    }
    this.cache.delete(streamId);
    this.cache.set(streamId, state);
    if (this.cache.size > CACHED_STATES) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    return state;
  }

  /**
   * Resolves `url` with its gatekeeper (which checks scheme, registration and scope fragment) and
   * appends ResourceIntroduced with the workspace's revision as expected revision.
   * @throws WorkspaceNotFound, InvalidArgument (bad name), BindingAlreadyExists, NoGatekeeperForResource,
   *   and the gatekeeper's own error (e.g. a malformed scope fragment) passed through.
   */
  async introduce(
    workspaceId: string,
    url: string,
    name: string,
    actor: string,
  ): Promise<ResourceIntroduced> {
    const introduced = await this.prepareIntroduction(url, name);
    const { result } = await this.appendAtRevision(
      workspaceId,
      actor,
      async (state) => {
        if (state.bindings.has(introduced.binding)) throw new BindingAlreadyExists(introduced.binding);
        return {
          type: "ResourceIntroduced",
          data: ResourceIntroduced.toJSON(introduced),
          result: introduced,
        };
      },
      "the workspace changed too often while introducing the resource; try again",
    );
    return result;
  }

  /**
   * The ResourceIntroduced that introducing `url` as `name` ("" = the gatekeeper's default) would
   * append: the name is checked and the URL resolved with its gatekeeper; nothing is appended.
   * @throws InvalidArgument (no url, bad name), NoGatekeeperForResource, the gatekeeper's own error.
   */
  async prepareIntroduction(url: string, name: string): Promise<ResourceIntroduced> {
    if (!url) throw new InvalidArgument("url is required, e.g. mcp://memory or https://host/mcp");
    const wanted = name.trim().toUpperCase();
    if (wanted && !BINDING_NAME.test(wanted)) {
      throw new InvalidArgument(
        `name "${name}" is not a valid binding name; use letters, digits and _ and start with a letter`,
      );
    }
    const kind = gatekeeperKindFor(url);
    const resolved = await this.resolve(kind, { url, name: wanted });
    return {
      binding: resolved.binding,
      url: resolved.url || url,
      gatekeeper: kind,
      trust: resolved.trust,
      dts: resolved.dts,
      methods: resolved.methods,
      actionKinds: resolved.actionKinds,
    };
  }

  /**
   * Checks `url` with its gatekeeper without connecting to the external system
   * (ResolveResourceRequest.check_only): scheme served here, registration, scope fragment.
   * @returns the gatekeeper kind and the URL as the gatekeeper normalized it.
   * @throws InvalidArgument (not a URL), NoGatekeeperForResource, the gatekeeper's own error.
   */
  async checkUrl(url: string): Promise<{ gatekeeper: string; url: string }> {
    const kind = gatekeeperKindFor(url);
    const resolved = await this.resolve(kind, { url, name: "", checkOnly: true });
    return { gatekeeper: kind, url: resolved.url || url };
  }

  /**
   * Appends one event decided against the workspace's current state, with that state's revision
   * as expected revision, so nothing appended in between is overlooked: loads the state, calls
   * `decide(state)` for the event `{type, data}` (it may throw to refuse; nothing is appended
   * then), appends it with `metadata.actor = actor`. When another append got in first
   * (WrongExpectedRevision), it reloads and decides again, at most 5 times.
   * @returns `decide`'s `result` and the stream revision of the appended event.
   * @throws WorkspaceNotFound; whatever `decide` throws; InvalidArgument(`tooBusy`) after 5 conflicts.
   */
  async appendAtRevision<T>(
    workspaceId: string,
    actor: string,
    decide: (state: WorkspaceState) => Promise<{ type: string; data: unknown; result: T }>,
    tooBusy: string,
  ): Promise<{ result: T; revision: number }> {
    return this.appendEventsAtRevision(
      workspaceId,
      actor,
      async (state) => {
        const { type, data, result } = await decide(state);
        return { events: [{ type, data }], result };
      },
      tooBusy,
    );
  }

  /**
   * As {@link appendAtRevision}, for several events appended together (all or none), each with
   * `metadata.actor = actor` and, when given, `metadata.caller = caller`. When `decide` returns no
   * events, nothing is appended.
   * @returns `decide`'s `result` and the stream revision of the last appended event (of the state
   *   decided on, when none was appended).
   */
  async appendEventsAtRevision<T>(
    workspaceId: string,
    actor: string,
    decide: (state: WorkspaceState) => Promise<{ events: { type: string; data: unknown }[]; result: T }>,
    tooBusy: string,
    caller?: { kind: string; id: string },
  ): Promise<{ result: T; revision: number }> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const state = await this.load(workspaceId);
      const decided = await decide(state);
      if (decided.events.length === 0) return { result: decided.result, revision: state.revision };
      try {
        const res = await this.store.append(
          streamOf(workspaceId),
          decided.events.map((e) => ({
            type: e.type,
            data: e.data,
            metadata: caller ? { actor, caller } : { actor },
          })),
          state.revision,
        );
        return { result: decided.result, revision: res.nextExpectedRevision };
      } catch (err) {
        if (!(err instanceof WrongExpectedRevision)) throw err;
      }
    }
    throw new InvalidArgument(tooBusy);
  }

  private resolve(kind: string, req: ResolveResourceRequest): Promise<ResolveResourceResponse> {
    const client = this.gatekeepers.get(kind);
    return new Promise((resolve, reject) => {
      client.resolveResource(req, new Metadata(), { deadline: Date.now() + 30_000 }, (err, res) =>
        err ? reject(err) : resolve(res),
      );
    });
  }
}
