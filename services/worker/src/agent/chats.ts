/**
 * Starting and steering the built-in agent's chats: start a chat, send a message (which records
 * ChatUserMessage + ChatTurnStarted and starts the turn's workflow), cancel a turn (a signal), read a
 * chat (its fold). What an API surface (gateway, kernel) calls; `gatehouse dev` holds one.
 * With no model configured the agent is off: every call but reading throws AgentOff naming the
 * variables to set.
 */
import { type ChatView, decideChat } from "@gatehouse/agent-core";
import { type AgentConfig, AgentConfigError, modelFor, modelLabel } from "@gatehouse/agent-core/providers";
import type { EventStore } from "@gatehouse/event-store";
import { type Client, WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import {
  AGENT_TASK_QUEUE,
  AGENT_TURN_WORKFLOW,
  type AgentTurnInput,
  agentCancelSignal,
  agentTurnWorkflowId,
} from "../agent-workflows/contract.ts";
import { appendChat, readChats } from "./chat-appends.ts";

/** The agent is not configured on this deployment. */
export class AgentOff extends Error {
  override name = "AgentOff";
  constructor() {
    super(
      "the built-in agent is off: no model is configured. Set AGENT_PROVIDER and AGENT_MODEL (with AGENT_BASE_URL for an openai-compatible endpoint, AGENT_API_KEY_FILE for a key), or AGENT_MODELS_FILE for per-workspace models, on the worker (or the gatehouse dev process) and restart it",
    );
  }
}

/** True when `config` names any model (the deployment's or a workspace's). */
export function agentEnabled(config: AgentConfig | undefined): config is AgentConfig {
  return !!config && (!!config.deployment || config.workspaces.size > 0);
}

/** Options of `agentChats`. */
export interface AgentChatsOptions {
  store: EventStore;
  /** Temporal client (its namespace is where turns run); needed only when the agent is on. */
  client: Client | undefined;
  /** The agent configuration; undefined or naming no model: the agent is off. */
  config: AgentConfig | undefined;
  /** Task queue of the agent worker; default AGENT_TASK_QUEUE. */
  taskQueue?: string;
}

/** The chat operations. `person` is "user:<subject>". */
export interface AgentChats {
  /** Whether a model is configured. */
  readonly enabled: boolean;
  /**
   * Records ChatStarted (surface "agent", the workspace's model label).
   * @throws AgentOff; AgentConfigError (the workspace has no model); ChatInvalid; ChatExists.
   */
  startChat(input: { workspaceId: string; chatId: string; person: string }): Promise<void>;
  /**
   * Records the person's message and a new turn, then starts the turn's workflow.
   * @returns the turn's workflow id.
   * @throws AgentOff; ChatNotFound; NotChatOwner; ChatInvalid (empty/oversized text, bad turn id);
   *   TurnInProgress (a turn of the chat has not ended).
   */
  sendMessage(input: {
    workspaceId: string;
    chatId: string;
    turnId: string;
    text: string;
    person: string;
  }): Promise<{ workflowId: string }>;
  /**
   * Asks the turn to stop (a signal; the turn records ChatTurnEnded "cancelled").
   * @throws AgentOff; ChatNotFound; NotChatOwner; TurnNotOpen (unknown or ended turn).
   */
  cancel(input: { workspaceId: string; chatId: string; turnId: string; person: string }): Promise<void>;
  /** The chat as folded from the stream, or undefined when there is none by that id. */
  read(input: { workspaceId: string; chatId: string }): Promise<ChatView | undefined>;
  /**
   * The workspace's built-in agent chats (surface "agent", not MCP sessions), in the order they
   * started, and the stream revision they were read at.
   * @throws StreamNotFound when the workspace stream does not exist.
   */
  list(input: { workspaceId: string }): Promise<{ revision: number; chats: ChatView[] }>;
  /** Whether a chat can start in the workspace: its model label, or why not (never throws for "off"). */
  info(input: { workspaceId: string }): AgentInfoView;
}

/** What `AgentChats.info` answers. */
export interface AgentInfoView {
  enabled: boolean;
  /** "<provider>:<model>" ("" when off). */
  model: string;
  /** When off: what to configure ("" when on). */
  reason: string;
}

function personCaller(person: string) {
  return { actor: person, caller: { kind: "user", id: person.replace(/^user:/, "") } };
}

/** The chat operations over a store and Temporal. */
export function agentChats(options: AgentChatsOptions): AgentChats {
  const { store, client } = options;
  const taskQueue = options.taskQueue ?? AGENT_TASK_QUEUE;
  const on = (): AgentConfig => {
    if (!agentEnabled(options.config) || !client) throw new AgentOff();
    return options.config;
  };
  return {
    enabled: agentEnabled(options.config),

    async startChat({ workspaceId, chatId, person }) {
      const model = modelLabel(modelFor(on(), workspaceId));
      await appendChat(
        store,
        workspaceId,
        chatId,
        [{ type: "StartChat", chatId, startedBy: person, model }],
        personCaller(person),
      );
    },

    async sendMessage({ workspaceId, chatId, turnId, text, person }) {
      const config = on();
      const model = modelLabel(modelFor(config, workspaceId));
      const { maxSteps, maxTokens, modelAttempts } = config.limits;
      await appendChat(
        store,
        workspaceId,
        chatId,
        [{ type: "SendMessage", chatId, turnId, text, sentBy: person, model, maxSteps, maxTokens }],
        personCaller(person),
      );
      const workflowId = agentTurnWorkflowId(workspaceId, turnId);
      const input: AgentTurnInput = { workspaceId, chatId, turnId, maxSteps, maxTokens, modelAttempts };
      try {
        await (client as Client).workflow.start(AGENT_TURN_WORKFLOW, {
          taskQueue,
          workflowId,
          args: [input],
        });
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return { workflowId };
        // The turn is recorded but nothing will run it: end it, so the chat takes messages again.
        await appendChat(store, workspaceId, chatId, [
          {
            type: "EndTurn",
            chatId,
            turnId,
            reason: "error",
            message: `the turn could not start: ${(err as Error).message}`,
          },
        ]).catch(() => {});
        throw err;
      }
      return { workflowId };
    },

    async cancel({ workspaceId, chatId, turnId, person }) {
      on();
      const { chats } = await readChats(store, workspaceId);
      decideChat({ type: "CheckCancel", chatId, turnId, by: person }, chats);
      await (client as Client).workflow
        .getHandle(agentTurnWorkflowId(workspaceId, turnId))
        .signal(agentCancelSignal, { by: person });
    },

    async read({ workspaceId, chatId }) {
      const { chats } = await readChats(store, workspaceId);
      return chats.chats.get(chatId);
    },

    async list({ workspaceId }) {
      const { chats } = await readChats(store, workspaceId);
      return {
        revision: chats.revision,
        chats: [...chats.chats.values()].filter((c) => c.surface === "agent"),
      };
    },

    info({ workspaceId }) {
      try {
        return { enabled: true, model: modelLabel(modelFor(on(), workspaceId)), reason: "" };
      } catch (err) {
        if (err instanceof AgentOff || err instanceof AgentConfigError)
          return { enabled: false, model: "", reason: err.message };
        throw err;
      }
    },
  };
}
