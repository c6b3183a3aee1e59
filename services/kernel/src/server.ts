/** Thin gRPC handlers for the Kernel service: decode, call the domain, map errors. */

import type { NotifyConfig } from "@gatehouse/notify";
import type { KernelServer } from "@gatehouse/proto";
import type { handleUnaryCall, sendUnaryData } from "@grpc/grpc-js";
import { agentEnvDts } from "./agent-dts.ts";
import { watchBindings } from "./bindings-watch.ts";
import { startChat } from "./chats.ts";
import { checkPerson, workspaceOf } from "./domain/membership.ts";
import { toServiceError } from "./errors.ts";
import { executionView } from "./execution-view.ts";
import { addMember, removeMember } from "./members.ts";
import { preferencesOf, preferencesView, setPreferences } from "./notification-preferences.ts";
import { addObserver } from "./observers.ts";
import { removeBinding } from "./revocation.ts";
import { loadTurn, waitForTurn } from "./turns.ts";

/** An AbortSignal that fires when the client cancels the call. */
function cancelledSignal(call: { on(event: "cancelled", cb: () => void): unknown }): AbortSignal {
  const controller = new AbortController();
  call.on("cancelled", () => controller.abort());
  return controller.signal;
}

import { type ExecutionDeps, executeCode } from "./execution.ts";

function reply<T>(callback: sendUnaryData<T>, work: () => Promise<T>): void {
  work().then(
    (value) => callback(null, value),
    (err) => callback(toServiceError(err) as never, null),
  );
}

/**
 * Builds the Kernel service implementation over the given dependencies; `notify` (absent: nothing is
 * sent) is what the notification-preference calls report as available and check webhook names against.
 */
export function kernelHandlers(deps: ExecutionDeps & { notify?: NotifyConfig | undefined }): KernelServer {
  const actor = "user:";
  const createWorkspace: KernelServer["createWorkspace"] = (call, cb) =>
    reply(cb, () =>
      deps.workspaces.create(
        { name: call.request.name, owner: call.request.owner, members: call.request.members },
        actor,
      ),
    );
  const listWorkspaces: KernelServer["listWorkspaces"] = (call, cb) =>
    reply(cb, async () => {
      if (call.request.person) checkPerson("person", call.request.person);
      return { workspaces: await deps.workspaces.list(call.request.person) };
    });
  const getWorkspace: KernelServer["getWorkspace"] = (call, cb) =>
    reply(cb, async () => workspaceOf(await deps.workspaces.load(call.request.workspaceId)));
  const addMemberHandler: KernelServer["addMember"] = (call, cb) =>
    reply(cb, () => addMember(deps.workspaces, call.request));
  const removeMemberHandler: KernelServer["removeMember"] = (call, cb) =>
    reply(cb, () => removeMember(deps.workspaces, call.request));
  const startChatHandler: KernelServer["startChat"] = (call, cb) =>
    reply(cb, () => startChat(deps.workspaces, call.request));
  const introduceResource: KernelServer["introduceResource"] = (call, cb) =>
    reply(cb, async () => {
      const { workspaceId, url, name } = call.request;
      const e = await deps.workspaces.introduce(workspaceId, url, name, actor);
      return {
        name: e.binding,
        url: e.url,
        gatekeeper: e.gatekeeper,
        trust: e.trust,
        dts: e.dts,
        methods: e.methods,
        actionKinds: e.actionKinds,
      };
    });
  const describeBindings: KernelServer["describeBindings"] = (call, cb) =>
    reply(cb, async () => {
      const state = await deps.workspaces.load(call.request.workspaceId);
      return {
        revision: state.revision,
        envDts: agentEnvDts([...state.bindings.values()]),
        bindings: [...state.bindings.values()].map((b) => ({
          name: b.name,
          url: b.url,
          gatekeeper: b.gatekeeper,
          trust: b.trust,
          dts: b.dts,
          methods: b.methods,
          actionKinds: b.actionKinds,
        })),
      };
    });
  const removeBindingHandler: KernelServer["removeBinding"] = (call, cb) =>
    reply(cb, () => removeBinding(deps, call.request));
  const execute: handleUnaryCall<Parameters<KernelServer["executeCode"]>[0]["request"], never> = (call, cb) =>
    reply(cb as never, () =>
      executeCode(deps, {
        workspaceId: call.request.workspaceId,
        code: call.request.code,
        caller: call.request.caller,
        limits: call.request.limits,
        executionId: call.request.executionId,
      }),
    );
  const getTurn: KernelServer["getTurn"] = (call, cb) =>
    reply(cb, async () => {
      const { workspaceId, turnId, wait } = call.request;
      await deps.workspaces.load(workspaceId);
      if (!wait) return loadTurn(deps.store, workspaceId, turnId);
      // Wait until the turn resumes or completes, or until shortly before the caller's deadline.
      const deadline = call.getDeadline();
      const ms = deadline instanceof Date ? deadline.getTime() - Date.now() - 250 : 10 * 60_000;
      const abort = AbortSignal.any([AbortSignal.timeout(Math.max(0, ms)), cancelledSignal(call)]);
      return waitForTurn(deps.store, workspaceId, turnId, abort);
    });
  const getExecution: KernelServer["getExecution"] = (call, cb) =>
    reply(cb, async () => {
      const { workspaceId, executionId } = call.request;
      await deps.workspaces.load(workspaceId);
      return executionView(deps.store, workspaceId, executionId);
    });
  const getNotificationPreferences: KernelServer["getNotificationPreferences"] = (call, cb) =>
    reply(cb, async () => {
      const { person } = call.request;
      checkPerson("person", person);
      return preferencesView(person, await preferencesOf(deps.store, person), deps.notify);
    });
  const setNotificationPreferences: KernelServer["setNotificationPreferences"] = (call, cb) =>
    reply(cb, () => setPreferences(deps.store, call.request, deps.notify));
  // Credentials in the request go to the gatekeepers only; see observers.ts.
  const addObserverHandler: KernelServer["addObserver"] = (call, cb) =>
    reply(cb, () => addObserver(deps, call.request));
  // A server stream: the workspace is checked first (NOT_FOUND ends the call), then every binding
  // change after `afterRevision` is written until the client cancels.
  const watch: KernelServer["watchBindings"] = (call) => {
    const { workspaceId, afterRevision } = call.request;
    // Listened for at once: a client that cancels while the workspace loads ends the watch too.
    const cancelled = cancelledSignal(call);
    deps.workspaces.load(workspaceId).then(
      () => {
        deps.metrics?.bindingWatches.inc();
        return watchBindings(
          deps.store,
          workspaceId,
          afterRevision,
          (change) => call.write(change),
          cancelled,
          (err) => call.emit("error", toServiceError(err)),
        ).finally(() => deps.metrics?.bindingWatches.dec());
      },
      (err) => call.emit("error", toServiceError(err)),
    );
  };
  return {
    watchBindings: watch,
    createWorkspace,
    listWorkspaces,
    introduceResource,
    describeBindings,
    removeBinding: removeBindingHandler,
    executeCode: execute as never,
    getTurn,
    addObserver: addObserverHandler,
    getWorkspace,
    addMember: addMemberHandler,
    removeMember: removeMemberHandler,
    startChat: startChatHandler,
    getExecution,
    getNotificationPreferences,
    setNotificationPreferences,
  };
}
