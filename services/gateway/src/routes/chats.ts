/**
 * The built-in agent's chat routes (@gatehouse/gateway-contract chats.ts) over the worker's
 * AgentChats service. Every member who reaches the workspace (the app's membership hook, before any
 * handler) may read its chats and start one; only the chat's starter sends to it or cancels its
 * turns (the service checks `person`, "user:<subject>" of the signed-in person). Chat and turn ids are
 * random UUIDs made here. Without AGENT_ADDRESS every chat route answers 503 `agent_off` naming it,
 * and GET …/agent answers `enabled: false` with that reason.
 */
import { randomUUID } from "node:crypto";
import {
  type AgentInfo,
  type CancelTurnResult,
  type Chat,
  type ChatsResponse,
  SendMessageBody,
  type SendMessageResult,
  StartChatBody,
} from "@gatehouse/gateway-contract";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { personIdOf } from "../auth/membership.ts";
import { AGENT_ADDRESS_UNSET, type Backends } from "../backends.ts";
import { toAgentInfo, toChat, toChatSummary } from "./chat-mapping.ts";
import { WorkspaceParam } from "./params.ts";

/** A chat or turn id as the agent records them: 1–128 letters, digits or . _ : - */
const Id = (what: string) =>
  z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, `a ${what} id has 1-128 letters, digits or . _ : -`);

const ChatParams = WorkspaceParam.extend({ chat: Id("chat") });
const TurnParams = ChatParams.extend({ turn: Id("turn") });

/** Registers the chat routes. */
export function chatRoutes(app: FastifyInstance, backends: Backends): void {
  app.get("/api/workspaces/:ws/agent", async (req): Promise<AgentInfo> => {
    const { ws } = WorkspaceParam.parse(req.params);
    if (!backends.agent) return { enabled: false, model: "", reason: AGENT_ADDRESS_UNSET };
    return toAgentInfo(await backends.agentCall((c) => c.getAgentInfo, { workspaceId: ws }));
  });

  app.get("/api/workspaces/:ws/chats", async (req): Promise<ChatsResponse> => {
    const { ws } = WorkspaceParam.parse(req.params);
    const res = await backends.agentCall((c) => c.listChats, { workspaceId: ws });
    return { chats: res.chats.map(toChatSummary), revision: res.revision };
  });

  app.post("/api/workspaces/:ws/chats", async (req, reply): Promise<Chat> => {
    const { ws } = WorkspaceParam.parse(req.params);
    StartChatBody.parse(req.body ?? {});
    const chat = await backends.agentCall((c) => c.startChat, {
      workspaceId: ws,
      chatId: randomUUID(),
      person: personIdOf(req.person),
    });
    reply.status(201);
    return toChat(chat);
  });

  app.get("/api/workspaces/:ws/chats/:chat", async (req): Promise<Chat> => {
    const { ws, chat } = ChatParams.parse(req.params);
    return toChat(await backends.agentCall((c) => c.getChat, { workspaceId: ws, chatId: chat }));
  });

  app.post("/api/workspaces/:ws/chats/:chat/messages", async (req, reply): Promise<SendMessageResult> => {
    const { ws, chat } = ChatParams.parse(req.params);
    const { text } = SendMessageBody.parse(req.body);
    const res = await backends.agentCall((c) => c.sendMessage, {
      workspaceId: ws,
      chatId: chat,
      turnId: randomUUID(),
      text,
      person: personIdOf(req.person),
    });
    reply.status(202);
    return { turnId: res.turnId };
  });

  app.post(
    "/api/workspaces/:ws/chats/:chat/turns/:turn/cancel",
    async (req, reply): Promise<CancelTurnResult> => {
      const { ws, chat, turn } = TurnParams.parse(req.params);
      const res = await backends.agentCall((c) => c.cancelTurn, {
        workspaceId: ws,
        chatId: chat,
        turnId: turn,
        person: personIdOf(req.person),
      });
      reply.status(202);
      return { turnId: res.turnId };
    },
  );
}
