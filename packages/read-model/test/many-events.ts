/** A store with many events fast: direct appends of valid domain events, workspaces interleaved. */
import { type DomainEvent, encodeEventData, workspaceStreamId } from "@gatehouse/approval-core";
import type { EventStore } from "@gatehouse/event-store";
import type { ActionDescription } from "@gatehouse/proto";

const DESCRIPTION: ActionDescription = {
  title: "write",
  description: "",
  descriptionIsComplete: true,
  delivery: 1,
  dependsOn: [],
  implementsRevert: 0,
  autoApprovable: false,
  actionKind: undefined,
  classifiedBy: "test",
  egress: false,
  summary: "",
  fields: [],
  risks: [],
  preflightWarnings: [],
  preview: "",
};

/** About `perWorkspace` events of workspace `ws` (submissions with dependencies, decisions, applies, observations, a late ChatStarted). */
function workspaceEvents(
  ws: string,
  perWorkspace: number,
): { e: DomainEvent; caller?: { kind: string; id: string } }[] {
  const out: { e: DomainEvent; caller?: { kind: string; id: string } }[] = [
    { e: { type: "WorkspaceCreated", data: { workspaceId: ws, name: ws, owner: "" } } },
    {
      e: {
        type: "ResourceIntroduced",
        data: {
          binding: "db",
          url: "mcp+stdio://db",
          gatekeeper: "mcp",
          trust: "vetted",
          dts: "",
          methods: [],
          actionKinds: undefined,
        },
      },
    },
  ];
  const actions: number[] = [];
  const caller = { kind: "agent", id: `chat-${ws}` };
  while (out.length < perWorkspace) {
    const revision = out.length;
    const k = revision % 10;
    if (k === 3 && actions.length > 2) {
      out.push({
        e: {
          type: "ActionApproved",
          data: {
            actionId: actions[actions.length - 2] as number,
            decidedBy: "user:a",
            descriptionDigest: "",
          },
        },
      });
    } else if (k === 6 && actions.length > 3) {
      out.push({
        e: {
          type: "ActionRejected",
          data: {
            actionId: actions[actions.length - 1] as number,
            decidedBy: "user:a",
            reason: "no",
            cascadedFrom: 0,
          },
        },
      });
    } else if (k === 8) {
      out.push({
        e: {
          type: "ObservationRecorded",
          data: {
            binding: "db",
            description: {
              title: "read",
              description: "",
              containsRestrictedData: false,
              kind: "r",
              page: 0,
            },
            executionId: "x",
            requestId: "",
          },
        },
        caller,
      });
    } else if (revision === Math.floor(perWorkspace / 2)) {
      out.push({
        e: {
          type: "ChatStarted",
          data: { chatId: caller.id, startedBy: "user:a", surface: "mcp-http", model: "" },
        },
      });
    } else {
      const dependsOn = actions.length > 0 && k === 1 ? [actions[actions.length - 1] as number] : [];
      out.push({
        e: {
          type: "ActionSubmitted",
          data: {
            binding: "db",
            localId: `l${revision}`,
            description: DESCRIPTION,
            dependsOn,
            payloadJson: "{}",
            executionId: "x",
          },
        },
        caller,
      });
      actions.push(revision);
    }
  }
  return out;
}

/** Appends `workspaces` × `perWorkspace` events in chunks of `chunk`, round-robin across workspaces. */
export async function appendMany(
  store: EventStore,
  prefix: string,
  workspaces: number,
  perWorkspace: number,
  chunk = 100,
): Promise<string[]> {
  const ids = Array.from({ length: workspaces }, (_, i) => `${prefix}${i}`);
  const all = ids.map((ws) => workspaceEvents(ws, perWorkspace));
  for (let from = 0; from < perWorkspace; from += chunk)
    for (const [i, ws] of ids.entries()) {
      const part = (all[i] as ReturnType<typeof workspaceEvents>).slice(from, from + chunk);
      await store.append(
        workspaceStreamId(ws),
        part.map(({ e, caller }) => ({
          type: e.type,
          data: encodeEventData(e),
          metadata: { actor: "user:a", caller },
        })),
        from === 0 ? "no_stream" : from - 1,
      );
    }
  return ids;
}
