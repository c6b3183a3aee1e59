/**
 * Workspaces and bindings: create, list, introduce a resource, describe bindings. All state is in
 * the event store (`workspace-<id>` streams); this class holds no cache, so several kernel
 * processes can share one store.
 */
import { randomBytes } from "node:crypto";
import type { EventStore } from "@gatehouse/event-store";
import { WrongExpectedRevision } from "@gatehouse/event-store";
import type { ResolveResourceRequest } from "@gatehouse/proto";
import { type ResolveResourceResponse, ResourceIntroduced, WorkspaceCreated } from "@gatehouse/proto";
import { Metadata } from "@grpc/grpc-js";
import { BindingAlreadyExists, InvalidArgument, WorkspaceNotFound } from "./domain/errors.ts";
import { foldWorkspace, streamOf, type WorkspaceState } from "./domain/workspace.ts";
import { type GatekeeperClients, gatekeeperKindFor } from "./gatekeepers.ts";

const WORKSPACE_ID = /^[a-z0-9][a-z0-9-]{2,62}$/;
const BINDING_NAME = /^[A-Z][A-Z0-9_]{0,62}$/;

export interface WorkspaceSummary {
  id: string;
  name: string;
}

/** Workspaces and their bindings over the event store, resolving resources with their gatekeepers. */
export class Workspaces {
  constructor(
    private readonly store: EventStore,
    private readonly gatekeepers: GatekeeperClients,
  ) {}

  /** Creates a workspace with a fresh id (`w` + 10 hex digits) and appends WorkspaceCreated. */
  async create(name: string, actor: string): Promise<WorkspaceSummary> {
    if (name.length > 200) throw new InvalidArgument("name must be at most 200 characters");
    const id = `w${randomBytes(5).toString("hex")}`;
    await this.store.append(
      streamOf(id),
      [
        {
          type: "WorkspaceCreated",
          data: WorkspaceCreated.toJSON({ workspaceId: id, name }),
          metadata: { actor },
        },
      ],
      "no_stream",
    );
    return { id, name };
  }

  /** All workspaces in creation order. */
  async list(): Promise<WorkspaceSummary[]> {
    const ids = await this.store.listStreams("workspace-");
    const out: WorkspaceSummary[] = [];
    for (const streamId of ids) {
      const [first] = await this.store.readStream(streamId, { maxCount: 1 });
      if (first?.type !== "WorkspaceCreated") continue;
      const e = WorkspaceCreated.fromJSON(first.data);
      out.push({ id: e.workspaceId, name: e.name });
    }
    return out;
  }

  /**
   * The current state of a workspace.
   * @throws WorkspaceNotFound when the id is malformed or has no stream.
   */
  async load(workspaceId: string): Promise<WorkspaceState> {
    if (!WORKSPACE_ID.test(workspaceId)) throw new WorkspaceNotFound(workspaceId);
    if ((await this.store.streamRevision(streamOf(workspaceId))) < 0)
      throw new WorkspaceNotFound(workspaceId);
    const state = foldWorkspace(await this.store.readStream(streamOf(workspaceId)));
    if (!state.id) throw new WorkspaceNotFound(workspaceId);
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
