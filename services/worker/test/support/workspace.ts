/** Builds workspace streams the way the kernel and the approval service do (through the domain). */
import { decide, WorkspaceStreams } from "@gatehouse/approval-core";
import type { EventStore } from "@gatehouse/event-store";
import { type ActionDescription, Delivery, ResourceIntroduced, WorkspaceCreated } from "@gatehouse/proto";

/** Appends WorkspaceCreated + one ResourceIntroduced per binding (gatekeeper kind "mcp"). */
export async function seedWorkspace(
  store: EventStore,
  workspaceId: string,
  bindings: string[] = ["MEM"],
): Promise<void> {
  await store.append(
    `workspace-${workspaceId}`,
    [
      {
        type: "WorkspaceCreated",
        data: WorkspaceCreated.toJSON({ workspaceId, name: workspaceId, owner: "" }),
        metadata: { actor: "service:kernel" },
      },
      ...bindings.map((b) => ({
        type: "ResourceIntroduced",
        data: ResourceIntroduced.toJSON({
          binding: b,
          url: `mcp+stdio://${b.toLowerCase()}`,
          gatekeeper: "mcp",
          trust: "vetted",
          dts: "",
          methods: [],
          actionKinds: undefined,
        }),
        metadata: { actor: "user:alice" },
      })),
    ],
    "no_stream",
  );
}

export function description(over: Partial<ActionDescription> = {}): ActionDescription {
  return {
    title: "Call create_entities on memory",
    description: "```json\n{}\n```",
    descriptionIsComplete: true,
    delivery: Delivery.DELIVERY_SIMULATE,
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
    ...over,
  };
}

/** Submits an action through the domain (SubmitAction). @returns its action id (stream revision). */
export async function submit(
  streams: WorkspaceStreams,
  workspaceId: string,
  localId: string,
  options: { dependsOn?: string[]; await?: boolean; executionId?: string; binding?: string } = {},
): Promise<number> {
  const { events } = await streams.execute(workspaceId, (s) =>
    decide(
      {
        type: "SubmitAction",
        binding: options.binding ?? "MEM",
        localId,
        description: description({
          dependsOn: options.dependsOn ?? [],
          delivery: options.await ? Delivery.DELIVERY_AWAIT : Delivery.DELIVERY_SIMULATE,
        }),
        payloadJson: JSON.stringify({ localId }),
        executionId: options.executionId ?? "exec-1",
      },
      s,
    ),
  );
  const first = events[0];
  if (!first) throw new Error("SubmitAction appended nothing");
  return first.revision;
}

export { WorkspaceStreams };
