import { AgentError } from '../domain/errors.js';
import type { Agent, AgentRun } from '../runtime/agent.js';
import type { ApprovalRef } from './approval-id.js';
import { chatMessages } from './chat-messages.js';
import { parseChatRequest, type ApprovalAnswer } from './chat-request.js';
import { ChatRun } from './chat-run.js';
import { ResponseSlot } from './response-slot.js';
import { assertUIStreamSdk, loadUIStreamSdk, type UIStreamSdk } from './sdk.js';

export interface ChatHandlerOptions {
  /** A failure of ours that a response answers with a 500 (its details stay on the server); `console.error` by default. */
  onError?: (error: unknown) => void;
  /**
   * The agent for a request of the chat `chatId`: a handle on the chat's stored session
   * (`createAgent({ ..., store, sessionId: chatId })`), created per request. The handler lets it go
   * (`close()`) when the request's run ends. `request` is there for authentication and settings:
   * a `Response` it throws (`new Response('Forbidden', { status: 403 })`) is the answer.
   */
  agentFor(chatId: string, request: Request): Agent | Promise<Agent>;
}

/** A fetch-style request handler: `(request) => Promise<Response>`. */
export type ChatRequestHandler = (request: Request) => Promise<Response>;

/**
 * The server side of `useChat` for any fetch-style server (a Next.js route handler's GET and POST,
 * Hono, node:http through `nodeListener`):
 * - POST with a new user message prompts the chat's session and streams the run as the AI SDK UI
 *   message stream. While a run of the chat is in progress in this process, the message steers it
 *   instead: its response carries the run from the turn that takes the message (the earlier
 *   response ends `continued`); if the run ends first, the message starts the next run.
 * - POST with the assistant message whose approval requests the user answered
 *   (`addToolApprovalResponse`) resolves them with the version they were asked at, and streams the
 *   rest of the run into the same message.
 * - The request's signal (the client's stop, a closed page) aborts the run its response carries.
 * - GET `?id=<chatId>` answers the conversation as `UIMessage[]` from the session (a reloaded page).
 * Failures are JSON `{ error: { code, message } }`: 400 for a request that is not a chat request,
 * 409 when the session refuses (`SessionBusy`, `StaleVersion`, `UnknownToolCall`).
 */
export function chatHandler(options: ChatHandlerOptions): ChatRequestHandler {
  assertUIStreamSdk();
  const runs = new Map<string, ChatRun>();
  /** Requests of one chat are set up one at a time: the second sees the run the first started. */
  const queues = new Map<string, Promise<unknown>>();
  const serially = <T>(chatId: string, work: () => Promise<T>): Promise<T> => {
    const next = (queues.get(chatId) ?? Promise.resolve()).then(work, work);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    queues.set(chatId, settled);
    void settled.then(() => queues.get(chatId) === settled && queues.delete(chatId));
    return next;
  };

  const openAgent = async (chatId: string, request: Request): Promise<Agent> => {
    const agent = await options.agentFor(chatId, request);
    try {
      await agent.ready;
    } catch (error) {
      await agent.close().catch(() => {});
      throw error;
    }
    return agent;
  };

  /** The run in this process, until it ends: then its agent is let go, or takes the messages sent meanwhile. */
  const follow = (sdk: UIStreamSdk, chatId: string, agent: Agent, run: AgentRun, answered: ApprovalRef[] = []) => {
    const chatRun = new ChatRun(agent, run, sdk.dialect, answered, async (ended, waiting) => {
      if (runs.get(chatId) === ended) runs.delete(chatId);
      const stillQueued: ResponseSlot[] = [];
      for (const entry of waiting) {
        const receipt = await entry.receipt.catch(() => null);
        if (receipt?.status === 'stillQueued' && entry.slot.isOpen) stillQueued.push(entry.slot);
        else entry.slot.end();
      }
      const next = stillQueued.pop();
      for (const slot of stillQueued) slot.end();
      if (!next) return agent.close();
      // Sent while the run was ending: those messages start the next run.
      try {
        const nextRun = follow(sdk, chatId, agent, agent.continue());
        nextRun.carry(next, nextRun.run.runId);
        nextRun.start();
      } catch (error) {
        next.fail(error);
        await agent.close();
      }
    });
    runs.set(chatId, chatRun);
    return chatRun;
  };

  const postMessage = async (sdk: UIStreamSdk, chatId: string, text: string, request: Request) => {
    let chatRun = runs.get(chatId);
    // A run ending right now: its agent is let go (or continues with messages sent meanwhile) first.
    while (chatRun?.finished) {
      await chatRun.done;
      chatRun = runs.get(chatId);
    }
    if (!chatRun) {
      const agent = await openAgent(chatId, request);
      // A run a restart interrupted resumed when the session loaded: the message steers it.
      const resumed = agent.currentRun;
      if (!resumed) {
        const run = start(agent, () => agent.prompt(text));
        const started = follow(sdk, chatId, agent, run);
        const slot = new ResponseSlot(request.signal, () => started.stop());
        started.carry(slot, run.runId);
        started.start();
        return slot.response(sdk);
      }
      chatRun = follow(sdk, chatId, agent, resumed).start();
    }
    const steered = chatRun;
    const receipt = steered.agent.steer(text); // a refusal (a closed handle) answers before any response exists
    const slot = new ResponseSlot(request.signal, () => steered.stop());
    steered.queue(slot, receipt);
    return slot.response(sdk);
  };

  const postApprovals = async (
    sdk: UIStreamSdk,
    chatId: string,
    messageId: string,
    answers: ApprovalAnswer[],
    request: Request,
  ) => {
    const active = runs.get(chatId);
    const agent = active?.agent ?? (await openAgent(chatId, request));
    const refs = answers.map((answer) => answer.ref);
    const live = active ?? (agent.currentRun ? follow(sdk, chatId, agent, agent.currentRun, refs).start() : null);
    let carrying: ChatRun | null = null;
    const slot = new ResponseSlot(request.signal, () => carrying?.stop());
    // The response carries the run before the answer: it writes everything the answer sets off.
    if (live) (carrying = live).carry(slot, messageId);
    try {
      if (!resolveAnswers(agent, answers)) {
        const ids = answers.map((answer) => answer.ref.toolCallId).join(', ');
        throw new AgentError('UnknownToolCall', `chatHandler: no approval of chat "${chatId}" is pending for ${ids}.`);
      }
    } catch (error) {
      carrying?.drop(slot);
      if (!live) await agent.close();
      throw error;
    }
    // A parked run answered by another handle than the one that started it: this handle runs the rest.
    if (!carrying) {
      const takenOver = agent.currentRun;
      if (!takenOver) {
        await agent.close();
        throw new AgentError('UnknownToolCall', `chatHandler: chat "${chatId}" has no run to continue.`);
      }
      carrying = follow(sdk, chatId, agent, takenOver, refs);
      carrying.carry(slot, messageId);
      carrying.start();
    }
    return slot.response(sdk);
  };

  const get = async (sdk: UIStreamSdk, request: Request) => {
    const url = new URL(request.url);
    const chatId = url.searchParams.get('id') ?? url.searchParams.get('chatId');
    if (!chatId) throw new AgentError('InvalidInput', 'chatHandler: GET needs the chat id (`?id=<chatId>`).');
    return serially(chatId, async () => {
      const active = runs.get(chatId);
      const agent = active?.agent ?? (await openAgent(chatId, request));
      const run = active?.run ?? agent.currentRun;
      const live = run ? { run, pendingApprovals: agent.pendingApprovals() } : null;
      const messages = await chatMessages(sdk, agent.messages, live);
      // A run the load resumed (a restart interrupted it) goes on here, for the answer that may follow.
      if (!active && run) follow(sdk, chatId, agent, run).start();
      else if (!active) await agent.close();
      return Response.json(messages);
    });
  };

  return async (request) => {
    try {
      const sdk = await loadUIStreamSdk();
      if (request.method === 'GET') return await get(sdk, request);
      if (request.method !== 'POST') {
        return Response.json(
          { error: { code: 'MethodNotAllowed', message: 'chatHandler answers GET and POST.' } },
          { status: 405, headers: { allow: 'GET, POST' } },
        );
      }
      const body: unknown = await request.json().catch(() => {
        throw new AgentError('InvalidInput', 'chatHandler: the request body is not JSON.');
      });
      const chat = parseChatRequest(body);
      return await serially(chat.chatId, () =>
        chat.kind === 'message'
          ? postMessage(sdk, chat.chatId, chat.text, request)
          : postApprovals(sdk, chat.chatId, chat.messageId, chat.answers, request),
      );
    } catch (error) {
      if (error instanceof Response) return error;
      if (!(error instanceof AgentError)) (options.onError ?? console.error)(error);
      return errorResponse(error);
    }
  };
}

/** Starts a run, or throws the agent's refusal (a run of this session is in progress elsewhere). */
function start(agent: Agent, prompt: () => AgentRun): AgentRun {
  try {
    return prompt();
  } catch (error) {
    void agent.close();
    throw error;
  }
}

/** Answers each approval still pending; false when none was (an answer sent twice, or for another run). */
function resolveAnswers(agent: Agent, answers: ApprovalAnswer[]): boolean {
  let resolved = false;
  for (const { ref, decision } of answers) {
    const pending = agent.pendingApprovals().find((approval) => approval.toolCallId === ref.toolCallId);
    if (!pending || pending.elicitation) continue;
    agent.resolveApproval(ref.toolCallId, decision, { version: ref.version });
    resolved = true;
  }
  return resolved;
}

/** Refusals of the session's state at that moment: the same request may succeed later (409). */
const CONFLICTS = new Set<string>([
  'SessionBusy',
  'SessionLost',
  'Closed',
  'StaleVersion',
  'UnknownToolCall',
  'AlreadyRunning',
  'NotReady',
  'NothingToContinue',
]);

function errorResponse(error: unknown): Response {
  if (error instanceof AgentError) {
    const status = error.code === 'InvalidInput' ? 400 : CONFLICTS.has(error.code) ? 409 : 500;
    return Response.json({ error: { code: error.code, message: error.message } }, { status });
  }
  // Details of an unexpected failure stay on the server.
  return Response.json({ error: { code: 'internal', message: 'chatHandler failed.' } }, { status: 500 });
}
