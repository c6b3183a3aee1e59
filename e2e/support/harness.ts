/**
 * Test harness for the cross-service suites: a real dev stack (event store, approval service, MCP
 * gatekeeper with the real memory and filesystem servers from npm, sandbox runner, kernel) in a temp
 * dir, and promise-returning gRPC clients.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DevStack, type DevStackOptions, startDevStack } from "@gatehouse/dev-stack";
import type { RegistryConfig } from "@gatehouse/gatekeeper-mcp";
import { DecisionsClient, type ExecuteResult, KernelClient } from "@gatehouse/proto";
import { callUnary } from "@gatehouse/service-kit";
import { credentials } from "@grpc/grpc-js";

export interface Harness {
  dir: string;
  stack: DevStack;
  kernel: KernelClient;
  decisions: DecisionsClient;
  /**
   * Creates a workspace owned by dev-admin with dev-approver and dev-auditor as members (so every
   * dev token reaches it through the gateway) and connects the given URLs; returns its id.
   */
  workspace(...urls: string[]): Promise<string>;
  /** Creates a workspace with the given owner and members ("user:<subject>") and no bindings; returns its id. */
  workspaceOf(owner: string, members?: string[]): Promise<string>;
  exec(ws: string, code: string, wallTimeMs?: number): Promise<ExecuteResult>;
  /** Entities and relations in the memory server's own state file. */
  memoryState(): string[];
  close(): Promise<void>;
}

/** Owner of the workspaces `Harness.workspace` creates: the dev admin (removing bindings needs the owner). */
export const DEV_OWNER = "user:dev-admin";
/** Members of those workspaces: the other dev tokens' people. */
export const DEV_MEMBERS = ["user:dev-approver", "user:dev-auditor"];

/** A unary call on a grpc-js client as a promise (60 s deadline). */
export const unary = callUnary;

export async function startHarness(
  registry?: (dir: string) => RegistryConfig,
  extra: Pick<
    DevStackOptions,
    "gitRemotes" | "postgresRegistry" | "natsUrl" | "sandbox" | "maxFrameBytes" | "oidc" | "agent"
  > = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-e2e-"));
  const stack = await startDevStack({ dataDir: dir, registry: registry?.(dir), ...extra });
  const kernel = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
  const decisions = new DecisionsClient(stack.addresses.approval, credentials.createInsecure());
  const h: Harness = {
    dir,
    stack,
    kernel,
    decisions,
    async workspaceOf(owner, members = []) {
      return (await unary(kernel, kernel.createWorkspace, { name: "test", owner, members })).id;
    },
    async workspace(...urls) {
      const ws = await unary(kernel, kernel.createWorkspace, {
        name: "test",
        owner: DEV_OWNER,
        members: DEV_MEMBERS,
      });
      for (const url of urls)
        await unary(kernel, kernel.introduceResource, { workspaceId: ws.id, url, name: "" });
      return ws.id;
    },
    exec(ws, code, wallTimeMs = 60_000) {
      return unary(kernel, kernel.executeCode, {
        workspaceId: ws,
        code,
        caller: { kind: "agent", id: "chat-1" },
        limits: { wallTimeMs, heapMb: 0, outputBytes: 0 },
        executionId: "",
      });
    },
    memoryState() {
      try {
        return readFileSync(join(dir, "memory.jsonl"), "utf8").split("\n").filter(Boolean);
      } catch {
        return [];
      }
    },
    async close() {
      kernel.close();
      decisions.close();
      await stack.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

/** The snippet's return value, or a thrown Error carrying the snippet's error. */
export function returned<T = unknown>(r: ExecuteResult): T {
  if (!r.ok) throw new Error(`snippet failed: ${r.error?.name}: ${r.error?.message}`);
  return (r.returnJson ? JSON.parse(r.returnJson) : undefined) as T;
}
