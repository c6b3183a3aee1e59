/**
 * Workspace membership in the kernel (CreateWorkspace owner/members, AddMember, GetWorkspace,
 * ListWorkspaces filtered to one person), over gRPC against the kernel in-process on a real SQLite
 * event store in a temp dir. No gatekeeper is involved: membership never calls one.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type EventStore, openSqliteEventStore } from "@gatehouse/event-store";
import { KernelClient, MemberAdded, MemberRemoved, WorkspaceCreated } from "@gatehouse/proto";
import { callUnary, type UnaryMethod } from "@gatehouse/service-kit";
import { credentials, type ServiceError, status } from "@grpc/grpc-js";
import pino from "pino";
import { GatekeeperClients, type RunningKernel, startKernel, Workspaces } from "../src/index.ts";

let dir: string;
let store: EventStore;
let kernel: RunningKernel;
let client: KernelClient;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "kernel-members-"));
  store = openSqliteEventStore(join(dir, "events.sqlite"));
  kernel = await startKernel({
    store,
    callerTokenSecret: "k".repeat(32),
    gatekeepers: {},
    sandboxRunnerAddress: "127.0.0.1:1",
    logger: pino({ level: "silent" }),
  });
  client = new KernelClient(`127.0.0.1:${kernel.port}`, credentials.createInsecure());
});

after(async () => {
  client?.close();
  await kernel?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

function unary<Req, Res>(method: UnaryMethod<Req, Res>, req: Req): Promise<Res> {
  return callUnary(client, method, req);
}

async function refused(work: Promise<unknown>, code: number, message: RegExp): Promise<void> {
  await assert.rejects(work, (err: ServiceError) => {
    assert.equal(err.code, code, err.details);
    assert.match(err.details, message);
    return true;
  });
}

test("the creator owns the workspace: WorkspaceCreated names the owner and each member is a MemberAdded by the owner, in one append", async () => {
  const ws = await unary(client.createWorkspace, {
    name: "team",
    owner: "user:alice",
    members: ["user:bob", "user:alice", "user:bob", "user:auth0|5f1c"],
  });
  assert.deepEqual(ws.members, ["user:bob", "user:auth0|5f1c"], "duplicates and the owner are dropped");
  const events = await store.readStream(`workspace-${ws.id}`);
  assert.deepEqual(
    events.map((e) => e.type),
    ["WorkspaceCreated", "MemberAdded", "MemberAdded"],
  );
  assert.equal(WorkspaceCreated.fromJSON(events[0]!.data).owner, "user:alice");
  assert.equal(events[0]!.metadata.actor, "user:alice");
  assert.deepEqual(MemberAdded.fromJSON(events[1]!.data), { member: "user:bob", addedBy: "user:alice" });
  assert.deepEqual(await unary(client.getWorkspace, { workspaceId: ws.id }), {
    id: ws.id,
    name: "team",
    owner: "user:alice",
    members: ["user:bob", "user:auth0|5f1c"],
  });
});

test("ListWorkspaces with a person lists only what they own or were added to, with owner and members; without one, every workspace", async () => {
  const a = await unary(client.createWorkspace, { name: "a", owner: "user:carol", members: [] });
  const b = await unary(client.createWorkspace, { name: "b", owner: "user:dan", members: ["user:carol"] });
  const c = await unary(client.createWorkspace, { name: "c", owner: "user:dan", members: [] });
  const carol = await unary(client.listWorkspaces, { person: "user:carol" });
  assert.deepEqual(carol.workspaces, [
    { id: a.id, name: "a", owner: "user:carol", members: [] },
    { id: b.id, name: "b", owner: "user:dan", members: ["user:carol"] },
  ]);
  const nobody = await unary(client.listWorkspaces, { person: "user:eve" });
  assert.deepEqual(nobody.workspaces, []);
  const all = (await unary(client.listWorkspaces, { person: "" })).workspaces.map((w) => w.id);
  for (const id of [a.id, b.id, c.id]) assert.ok(all.includes(id), `${id} listed`);
  await refused(unary(client.listWorkspaces, { person: "carol" }), status.INVALID_ARGUMENT, /person must be/);
});

test("AddMember appends MemberAdded; adding the owner or a member again, or a malformed person, is refused and appends nothing", async () => {
  const ws = await unary(client.createWorkspace, { name: "m", owner: "user:frank", members: [] });
  const added = await unary(client.addMember, {
    workspaceId: ws.id,
    member: "user:gina",
    addedBy: "user:frank",
  });
  assert.deepEqual(added.members, ["user:gina"]);
  const revision = await store.streamRevision(`workspace-${ws.id}`);
  await refused(
    unary(client.addMember, { workspaceId: ws.id, member: "user:gina", addedBy: "user:frank" }),
    status.ALREADY_EXISTS,
    /user:gina is already a member of workspace/,
  );
  await refused(
    unary(client.addMember, { workspaceId: ws.id, member: "user:frank", addedBy: "user:frank" }),
    status.ALREADY_EXISTS,
    /user:frank owns workspace/,
  );
  await refused(
    unary(client.addMember, { workspaceId: ws.id, member: "gina smith", addedBy: "user:frank" }),
    status.INVALID_ARGUMENT,
    /member must be a person as "user:<subject>"/,
  );
  await refused(
    unary(client.addMember, { workspaceId: ws.id, member: "user:hal", addedBy: "" }),
    status.INVALID_ARGUMENT,
    /added_by must be a person/,
  );
  await refused(
    unary(client.addMember, { workspaceId: "wnothere00", member: "user:hal", addedBy: "user:frank" }),
    status.NOT_FOUND,
    /workspace "wnothere00" does not exist/,
  );
  assert.equal(await store.streamRevision(`workspace-${ws.id}`), revision, "nothing was appended");
});

test("CreateWorkspace refuses members without an owner and a malformed owner; a workspace without an owner reaches nobody", async () => {
  await refused(
    unary(client.createWorkspace, { name: "x", owner: "", members: ["user:ivy"] }),
    status.INVALID_ARGUMENT,
    /members were given without an owner/,
  );
  await refused(
    unary(client.createWorkspace, { name: "x", owner: "ivy", members: [] }),
    status.INVALID_ARGUMENT,
    /owner must be a person as "user:<subject>"/,
  );
  await refused(
    unary(client.createWorkspace, { name: "x", owner: "user:ivy", members: ["user:"] }),
    status.INVALID_ARGUMENT,
    /members\[0\] must be a person/,
  );
  const ws = await unary(client.createWorkspace, { name: "orphan", owner: "", members: [] });
  assert.equal(ws.owner, "");
  const listed = (await unary(client.listWorkspaces, { person: "user:ivy" })).workspaces;
  assert.ok(!listed.some((w) => w.id === ws.id));
});

test("a member added through one kernel is seen by another kernel sharing the store (its cached state catches up)", async () => {
  const other = openSqliteEventStore(join(dir, "events.sqlite"));
  try {
    const second = new Workspaces(other, new GatekeeperClients({}));
    const ws = await unary(client.createWorkspace, { name: "shared", owner: "user:jo", members: [] });
    assert.deepEqual((await second.load(ws.id)).members, []);
    await unary(client.addMember, { workspaceId: ws.id, member: "user:kim", addedBy: "user:jo" });
    assert.deepEqual((await second.load(ws.id)).members, ["user:kim"]);
    assert.deepEqual(
      (await second.list("user:kim")).map((w) => w.id),
      [ws.id],
    );
  } finally {
    await other.close();
  }
});

test("RemoveMember appends MemberRemoved and the person reaches it no more; the owner and a non-member are refused, appending nothing; they can be added again", async () => {
  const ws = await unary(client.createWorkspace, { name: "r", owner: "user:lee", members: ["user:max"] });
  const removed = await unary(client.removeMember, {
    workspaceId: ws.id,
    member: "user:max",
    removedBy: "user:lee",
  });
  assert.deepEqual(removed.members, []);
  const last = (await store.readStream(`workspace-${ws.id}`)).at(-1);
  assert.equal(last?.type, "MemberRemoved");
  assert.deepEqual(MemberRemoved.fromJSON(last?.data), { member: "user:max", removedBy: "user:lee" });
  assert.deepEqual((await unary(client.listWorkspaces, { person: "user:max" })).workspaces, []);
  const revision = await store.streamRevision(`workspace-${ws.id}`);
  await refused(
    unary(client.removeMember, { workspaceId: ws.id, member: "user:max", removedBy: "user:lee" }),
    status.NOT_FOUND,
    /user:max is not a member of workspace .* \(perhaps removed already\)/,
  );
  await refused(
    unary(client.removeMember, { workspaceId: ws.id, member: "user:lee", removedBy: "user:lee" }),
    status.FAILED_PRECONDITION,
    /user:lee owns workspace .* and cannot be removed from it/,
  );
  await refused(
    unary(client.removeMember, { workspaceId: ws.id, member: "max", removedBy: "user:lee" }),
    status.INVALID_ARGUMENT,
    /member must be a person/,
  );
  assert.equal(await store.streamRevision(`workspace-${ws.id}`), revision, "nothing was appended");
  const again = await unary(client.addMember, {
    workspaceId: ws.id,
    member: "user:max",
    addedBy: "user:lee",
  });
  assert.deepEqual(again.members, ["user:max"]);
});
