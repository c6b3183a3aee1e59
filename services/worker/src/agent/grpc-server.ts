/**
 * The AgentChats gRPC service (agent.proto), served by the worker process (or in-process by
 * `gatehouse dev`): thin handlers that check the person, call the chat operations (chats.ts), and map
 * errors in one place (grpc-errors.ts). Always served: with the agent off it answers GetAgentInfo
 * `enabled: false` and every write `agent_off`, naming the settings to set; reads still work.
 */

import { ChatNotFound } from "@gatehouse/agent-core";
import { type AgentChatsServer, AgentChatsService } from "@gatehouse/proto";
import { listenGrpc, stopGrpc } from "@gatehouse/service-kit";
import { serviceTracing } from "@gatehouse/telemetry";
import { Server, type ServiceError, type sendUnaryData, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { Histogram, type Registry } from "prom-client";
import { toAgentChat, toAgentChatSummary } from "./chat-messages.ts";
import type { AgentChats } from "./chats.ts";
import { AgentRequestInvalid, ERROR_CODE_KEY, toAgentServiceError } from "./grpc-errors.ts";

/** "user:<subject>" as the gateway names a person (printable ASCII, at most 255 after "user:"). */
const PERSON = /^user:[\x21-\x7e]{1,255}$/;

function checkPerson(person: string): void {
  if (!PERSON.test(person))
    throw new AgentRequestInvalid(
      `person must be "user:<subject>" (the signed-in person, set by the gateway); got ${JSON.stringify(person.slice(0, 40))}`,
    );
}

/** Builds the handlers; `observe` records each call's latency (seconds) by method and status code. */
export function agentChatsHandlers(
  chats: AgentChats,
  observe: (method: string, code: string, seconds: number) => void = () => {},
): AgentChatsServer {
  const reply = <T>(method: string, workspaceId: string, cb: sendUnaryData<T>, work: () => Promise<T>) => {
    const start = performance.now();
    work().then(
      (value) => {
        observe(method, "OK", (performance.now() - start) / 1000);
        cb(null, value);
      },
      (err) => {
        const e = toAgentServiceError(err, workspaceId);
        observe(method, status[e.code ?? status.UNKNOWN] ?? "UNKNOWN", (performance.now() - start) / 1000);
        cb(e as ServiceError, null);
      },
    );
  };
  const chatOf = async (workspaceId: string, chatId: string) => {
    const { revision, chats: all } = await chats.list({ workspaceId });
    const chat = all.find((c) => c.chatId === chatId);
    if (!chat) throw new ChatNotFound(chatId);
    return toAgentChat(workspaceId, chat, revision);
  };
  return {
    startChat: (call, cb) =>
      reply("StartChat", call.request.workspaceId, cb, async () => {
        const { workspaceId, chatId, person } = call.request;
        checkPerson(person);
        await chats.startChat({ workspaceId, chatId, person });
        return chatOf(workspaceId, chatId);
      }),
    sendMessage: (call, cb) =>
      reply("SendMessage", call.request.workspaceId, cb, async () => {
        const { workspaceId, chatId, turnId, text, person } = call.request;
        checkPerson(person);
        const { workflowId } = await chats.sendMessage({ workspaceId, chatId, turnId, text, person });
        return { turnId, workflowId };
      }),
    cancelTurn: (call, cb) =>
      reply("CancelTurn", call.request.workspaceId, cb, async () => {
        const { workspaceId, chatId, turnId, person } = call.request;
        checkPerson(person);
        await chats.cancel({ workspaceId, chatId, turnId, person });
        return { turnId };
      }),
    getChat: (call, cb) =>
      reply("GetChat", call.request.workspaceId, cb, () =>
        chatOf(call.request.workspaceId, call.request.chatId),
      ),
    listChats: (call, cb) =>
      reply("ListChats", call.request.workspaceId, cb, async () => {
        const { revision, chats: all } = await chats.list({ workspaceId: call.request.workspaceId });
        return { revision, chats: all.map(toAgentChatSummary).reverse() };
      }),
    getAgentInfo: (call, cb) =>
      reply("GetAgentInfo", call.request.workspaceId, cb, async () =>
        chats.info({ workspaceId: call.request.workspaceId }),
      ),
  };
}

/** Options of `startAgentChatsServer`. */
export interface AgentChatsServerOptions {
  chats: AgentChats;
  /** Default "127.0.0.1". */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Where `gatehouse_worker_agent_rpc_seconds` is registered (the worker's /metrics registry). */
  registry?: Registry;
  logger?: Logger;
}

/** A listening AgentChats server. */
export interface AgentChatsGrpcServer {
  port: number;
  /** "host:port" to give the gateway (AGENT_ADDRESS). */
  address: string;
  /** Stops accepting calls, waits up to 2 s for those in flight. */
  close(): Promise<void>;
}

/**
 * Serves AgentChats on host:port.
 * @throws the bind error (e.g. EADDRINUSE) unchanged.
 */
export async function startAgentChatsServer(options: AgentChatsServerOptions): Promise<AgentChatsGrpcServer> {
  const seconds = new Histogram({
    name: "gatehouse_worker_agent_rpc_seconds",
    help: "Latency of AgentChats calls (start, send, cancel, read, list, info), by method and gRPC status code",
    labelNames: ["method", "code"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: options.registry ? [options.registry] : [],
  });
  const tracing = serviceTracing("worker");
  const server = new Server();
  server.addService(
    AgentChatsService,
    tracing.traceGrpcService(
      AgentChatsService,
      agentChatsHandlers(options.chats, (method, code, s) => seconds.observe({ method, code }, s)),
    ),
  );
  const host = options.host ?? "127.0.0.1";
  const port = await listenGrpc(server, host, options.port ?? 0);
  const address = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  options.logger
    ?.child({ component: "worker" })
    .info({ event: "agent_grpc_listening", address, agent: options.chats.enabled ? "on" : "off" });
  return { port, address, close: () => stopGrpc(server) };
}

export { ERROR_CODE_KEY };
