import { AgentError } from '../domain/errors.js';
import type { Agent, AgentRun, SteerReceipt } from '../runtime/agent.js';
import type { SessionStore } from '../store/types.js';
import type { ApprovalRef } from './approval-id.js';
import { chatMessages } from './chat-messages.js';
import { parseChatRequest, type ApprovalAnswer } from './chat-request.js';
import { ChatRun } from './chat-run.js';
import { approvalsAwaited, openTurnOf, storedMessages } from './open-turn.js';
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
  /**
   * The store `agentFor`'s agents use: with it, a page that reloads while a run waits for an
   * approval (its handle gone) shows that turn whole (without it, the calls that wait), and one
   * that reloads while another server runs the chat shows what that run has stored (else a 409).
   */
  store?: SessionStore;
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

  /** The chat's run in this process that a request can still join (one ending right now is let go first). */
  const activeRun = async (chatId: string): Promise<ChatRun | undefined> => {
    let chatRun = runs.get(chatId);
    // Its agent is let go (or continues with messages sent meanwhile) before the request goes on.
    while (chatRun?.finished) {
      await chatRun.done;
      chatRun = runs.get(chatId);
    }
    return chatRun;
  };

  const postMessage = async (sdk: UIStreamSdk, chatId: string, text: string, request: Request) => {
    const chatRun = await activeRun(chatId);
    if (chatRun) return steer(sdk, chatRun, chatRun.agent.steer(text), request);
    const agent = await openAgent(chatId, request);
    // The session's own run (one a restart interrupted, resumed as it loaded, or one parked at an
    // approval) takes the message as steering: a parked approval is withdrawn, the run goes on here.
    if (agent.currentRun || approvalsAwaited(agent).length > 0) {
      const receipt = agent.steer(text);
      const run = await runTaking(agent, receipt);
      if (run) return steer(sdk, follow(sdk, chatId, agent, run), receipt, request);
      await agent.close();
      throw new AgentError('AlreadyRunning', `chatHandler: chat "${chatId}" has a run that did not take the message.`);
    }
    const run = start(agent, () => agent.prompt(text));
    const started = follow(sdk, chatId, agent, run);
    const slot = new ResponseSlot(request.signal, () => started.stop());
    started.carry(slot, run.runId);
    started.start();
    return slot.response(sdk);
  };

  /** A steering message's response: it waits for the turn that takes the message. */
  const steer = (sdk: UIStreamSdk, chatRun: ChatRun, receipt: Promise<SteerReceipt>, request: Request) => {
    const slot = new ResponseSlot(request.signal, () => chatRun.stop());
    chatRun.queue(slot, receipt);
    if (!chatRun.started) chatRun.start();
    return slot.response(sdk);
  };

  const postApprovals = async (
    sdk: UIStreamSdk,
    chatId: string,
    messageId: string,
    answers: ApprovalAnswer[],
    request: Request,
  ) => {
    const active = await activeRun(chatId);
    const agent = active?.agent ?? (await openAgent(chatId, request));
    const refs = answers.map((answer) => answer.ref);
    // A run of this handle (the one that asked, still here; or one a restart interrupted) is followed now.
    const live = active ?? (agent.currentRun ? follow(sdk, chatId, agent, agent.currentRun, refs).start() : null);
    let carrying: ChatRun | null = live;
    const slot = new ResponseSlot(request.signal, () => carrying?.stop());
    // The response carries the run before the answer: it writes everything the answer sets off.
    live?.carry(slot, messageId);
    let continued: AgentRun | null;
    try {
      continued = resolveAnswers(agent, answers);
      if (!continued) {
        const ids = answers.map((answer) => answer.ref.toolCallId).join(', ');
        throw new AgentError('UnknownToolCall', `chatHandler: no approval of chat "${chatId}" is pending for ${ids}.`);
      }
    } catch (error) {
      live?.drop(slot);
      if (!live) await agent.close();
      throw error;
    }
    // A run parked at the approval (its handle gone): this handle takes it over and runs the rest.
    if (!carrying) {
      carrying = follow(sdk, chatId, agent, continued, refs);
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
      const active = await activeRun(chatId);
      const stored = options.store ? { store: options.store, sessionId: chatId } : null;
      let agent: Agent;
      try {
        agent = active?.agent ?? (await openAgent(chatId, request));
      } catch (error) {
        // Another server runs the chat (its lease held): the store shows what that run has written so far.
        if (!stored || !(error instanceof AgentError) || error.code !== 'SessionBusy') throw error;
        return Response.json(await storedMessages(sdk, stored));
      }
      const run = active?.run ?? agent.currentRun;
      const messages = await chatMessages(sdk, agent.messages, await openTurnOf(agent, run, stored));
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

/** Answers each approval still pending; the run that goes on, or null when none was (an answer sent twice, or for another run). */
function resolveAnswers(agent: Agent, answers: ApprovalAnswer[]): AgentRun | null {
  let continued: AgentRun | null = null;
  for (const { ref, decision } of answers) {
    if (!approvalsAwaited(agent).some((approval) => approval.toolCallId === ref.toolCallId)) continue;
    continued = agent.resolveApproval(ref.toolCallId, decision, { version: ref.version });
  }
  return continued;
}

/**
 * The run that takes a message steered into the session's own run: this handle's now (a parked run
 * is continued by the steer; with a server store once the lease is taken), or null if none did.
 */
function runTaking(agent: Agent, receipt: Promise<SteerReceipt>): Promise<AgentRun | null> {
  if (agent.currentRun) return Promise.resolve(agent.currentRun);
  return new Promise((resolve) => {
    const settle = (run: AgentRun | null) => {
      started.unsubscribe();
      resolve(run);
    };
    const started = agent.events.subscribe(() => settle(agent.currentRun));
    void receipt.then(
      () => settle(agent.currentRun),
      () => settle(null),
    );
  });
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
