// A snippet written the way an agent writes one: read first (observations), then write (pending
// actions held for a person). `env` holds only the workspace's bindings: MEMORY and FILES here.
// Run it with: gatehouse exec <workspace> examples/demo.ts
type Pending = { status: "pending"; actionId: number };
type ToolResult = { content: Array<{ type: string; text?: string }> };

// biome-ignore lint/suspicious/noExplicitAny: snippets are typed by `gatehouse bindings` (interface Env), not by this repo
export default async (env: any) => {
  // Reads: each is recorded as an observation before its data reaches this code.
  const graph: ToolResult = await env.MEMORY.read_graph({});
  const allowed: ToolResult = await env.FILES.list_allowed_directories({});
  const dir =
    (allowed.content[0]?.text ?? "")
      .split("\n")
      .find((l) => l.startsWith("/"))
      ?.trim() ?? "";
  console.log(
    `graph has ${graph.content[0]?.text?.length ?? 0} bytes; working in ${dir ? "the allowed dir" : "?"}`,
  );

  // Writes: each returns a pending handle at once; nothing reaches the servers until approved.
  const entities: Pending = await env.MEMORY.create_entities({
    entities: [
      { name: "Gatehouse", entityType: "project", observations: ["agents write, people approve"] },
      { name: "Ada", entityType: "person", observations: ["reviews the approval queue"] },
    ],
  });
  // This relation needs the entities: it depends on the first write.
  const relation: Pending = await env.MEMORY.create_relations(
    { relations: [{ from: "Ada", to: "Gatehouse", relationType: "maintains" }] },
    { dependsOn: [entities.actionId] },
  );
  const notes: Pending = await env.FILES.write_file({
    path: `${dir}/notes.md`,
    content: "# Notes\n\nWritten by an agent, applied after approval.\n",
  });
  const draft: Pending = await env.FILES.write_file({ path: `${dir}/draft.md`, content: "draft v1\n" });
  const polish: Pending = await env.FILES.edit_file(
    { path: `${dir}/draft.md`, edits: [{ oldText: "draft v1", newText: "draft v2" }] },
    { dependsOn: [draft.actionId] },
  );
  return { entities, relation, notes, draft, polish };
};
