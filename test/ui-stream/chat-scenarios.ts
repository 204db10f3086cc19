import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type Agent, type SessionStore } from 'agentchart';
import { chatHandler, type AgentchartUIMessage } from 'agentchart/ai-sdk-ui';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { deferred } from '../support/harness.js';
import { approvalsAnswered, NodeChat, until } from './node-chat.js';
import { deployTool, slowTool } from './tools.js';

type Script = Parameters<typeof scriptedModel>[0];

/** A chat server over one store: an agent per request, each let go when its run ends. */
export function server(
  script: Script,
  tools: Parameters<typeof createAgent>[0]['tools'] = [],
  store: SessionStore = memoryStore(),
  options: { maxTurns?: number; withoutStore?: boolean } = {},
) {
  const model = scriptedModel(script);
  const agents: Agent[] = [];
  const closed: Agent[] = [];
  const handler = chatHandler({
    store: options.withoutStore ? undefined : store,
    agentFor: (chatId) => {
      const agent = createAgent({
        model,
        tools,
        store,
        sessionId: chatId,
        streaming: 'live',
        steeringGraceMs: 20,
        ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}),
      });
      const close = agent.close.bind(agent);
      agent.close = () => (closed.push(agent), close());
      agents.push(agent);
      return agent;
    },
  });
  const get = async (chatId: string) => {
    const response = await handler(new Request(`http://127.0.0.1/api/chat?id=${encodeURIComponent(chatId)}`));
    return { status: response.status, messages: (await response.json()) as AgentchartUIMessage[] };
  };
  const storedLog = async (chatId: string) => {
    const checkpoint = await store.load(chatId);
    return checkInvariants(await store.loadEvents(chatId), checkpoint?.history);
  };
  return { handler, model, store, agents, closed, get, storedLog };
}

export const texts = (message: AgentchartUIMessage | undefined) =>
  message?.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])) ?? [];

/** The chat handler driven by the AI SDK's own Chat (`ai` is AI SDK 6 in the v6 suite). */
export function describeChatHandler(dialect: 'v6' | 'v7'): void {
  describe(`chatHandler with the AI SDK ${dialect === 'v7' ? 7 : 6} Chat (what useChat wraps)`, () => {
    it('a message prompts the session; the next request gets a new agent on the stored history; GET answers the conversation', async () => {
      const { handler, agents, closed, get, model } = server([
        { text: 'Hello! How can I help?' },
        { text: 'Sure, twice.' },
      ]);
      const chat = new NodeChat(handler, { id: 'chat-a' });

      await chat.sendMessage({ text: 'Hi!' });
      await chat.idle();
      await chat.sendMessage({ text: 'Say it again.' });
      await chat.idle();

      expect(chat.errors).toEqual([]);
      expect(chat.messages.map((message) => [message.role, texts(message)])).toEqual([
        ['user', ['Hi!']],
        ['assistant', ['Hello! How can I help?']],
        ['user', ['Say it again.']],
        ['assistant', ['Sure, twice.']],
      ]);
      expect(chat.messages[3]?.metadata).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
      // The second model call saw the whole stored history; each request's agent was let go.
      expect(model.requests[1]?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
      expect(agents).toHaveLength(2);
      await until(() => closed.length === 2, 'both agents are closed');

      const reloaded = await get('chat-a');
      expect(reloaded.status).toBe(200);
      expect(reloaded.messages.map((message) => [message.role, texts(message)])).toEqual(
        chat.messages.map((message) => [message.role, texts(message)]),
      );
      expect(reloaded.messages[1]?.parts.map((part) => part.type)).toEqual(['step-start', 'text']);
    });

    it('a durable approval: the UI shows the request, the answer runs the tool once, the answer follows in the same message', async () => {
      const ran: string[] = [];
      const { handler, get, storedLog } = server(
        [
          { text: 'Deploying.', toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] },
          { text: 'Prod is live.' },
        ],
        [deployTool(ran)],
      );
      const chat = new NodeChat(handler, { id: 'chat-b', sendAutomaticallyWhen: approvalsAnswered });

      await chat.sendMessage({ text: 'Deploy to prod.' });
      await chat.idle();
      const asked = chat.messages[1];
      const part = asked?.parts.find((p) => p.type === 'tool-deploy');
      expect(part).toMatchObject({ state: 'approval-requested', input: { env: 'prod' } });
      expect(asked?.metadata).toMatchObject({ status: 'awaitingApproval' });
      expect(ran).toEqual([]);

      // A reload while the approval waits shows it too.
      const waiting = await get('chat-b');
      expect(waiting.messages.at(-1)?.parts.find((p) => p.type === 'tool-deploy')).toMatchObject({
        state: 'approval-requested',
        approval: { id: (part as { approval: { id: string } }).approval.id },
      });

      await chat.addToolApprovalResponse({ id: (part as { approval: { id: string } }).approval.id, approved: true });
      await until(() => chat.messages[1]?.metadata?.status === 'completed', 'the run completes');
      await chat.idle();

      expect(chat.errors).toEqual([]);
      expect(ran).toEqual(['prod']);
      expect(chat.messages).toHaveLength(2);
      expect(texts(chat.messages[1])).toEqual(['Deploying.', 'Prod is live.']);
      expect(chat.messages[1]?.parts.find((p) => p.type === 'tool-deploy')).toMatchObject({
        state: 'output-available',
        output: 'deployed to prod',
        approval: { approved: true },
      });
      expect(await storedLog('chat-b')).toEqual({ ok: true, violations: [] });
    });

    it('a reload while an approval waits, without the store: the waiting call is shown, the answer from the reloaded page completes the run', async () => {
      const ran: string[] = [];
      const lookup = defineTool({
        name: 'lookup',
        description: 'Looks up.',
        parameters: z.object({}),
        execute: () => 'found it',
      });
      const { handler, get, storedLog } = server(
        [
          {
            text: 'Checking, then deploying.',
            toolCalls: [
              { id: 'l1', name: 'lookup' },
              { id: 'd1', name: 'deploy', arguments: { env: 'prod' } },
            ],
          },
          { text: 'Done.' },
        ],
        [lookup, deployTool(ran)],
        memoryStore(),
        { withoutStore: true },
      );
      const first = new NodeChat(handler, { id: 'chat-h' });
      await first.sendMessage({ text: 'Look it up and deploy.' });
      await first.idle();

      // The page reloads: the parked turn is the call that waits (its reply's text and the other call come later).
      const reloaded = await get('chat-h');
      const waiting = reloaded.messages.at(-1);
      expect(waiting?.parts.map((part) => part.type)).toEqual(['step-start', 'tool-deploy']);
      const part = waiting?.parts[1] as { state: string; approval: { id: string } };
      expect(part.state).toBe('approval-requested');

      const chat = new NodeChat(handler, {
        id: 'chat-h',
        messages: reloaded.messages,
        sendAutomaticallyWhen: approvalsAnswered,
      });
      await chat.addToolApprovalResponse({ id: part.approval.id, approved: true });
      await until(
        () => chat.messages.at(-1)?.metadata?.status === 'completed' || chat.errors.length > 0,
        'the run ends',
      );

      expect(chat.errors).toEqual([]);
      expect(ran).toEqual(['prod']);
      const tools = chat.messages.at(-1)?.parts.flatMap((p) => ('toolCallId' in p ? [[p.type, p.state]] : []));
      expect(tools).toEqual([
        ['tool-deploy', 'output-available'],
        ['tool-lookup', 'output-available'],
      ]);
      expect(texts(chat.messages.at(-1))).toEqual(['Done.']);
      expect(await storedLog('chat-h')).toEqual({ ok: true, violations: [] });
    });

    it('stop during streaming ends the run aborted with every call answered (the stored log checks)', async () => {
      const started = deferred();
      const wait = defineTool({
        name: 'wait',
        description: 'Waits.',
        parameters: z.object({}),
        execute: () => (started.resolve(), new Promise<string>(() => {})),
      });
      const { handler, storedLog, get, closed } = server(
        [
          {
            text: 'Waiting on two things.',
            toolCalls: [
              { id: 'w1', name: 'wait' },
              { id: 'w2', name: 'wait' },
            ],
          },
        ],
        [wait],
      );
      const chat = new NodeChat(handler, { id: 'chat-c' });

      const sending = chat.sendMessage({ text: 'Wait for them.' });
      await started.promise;
      await until(() => chat.status === 'streaming', 'the response streams');
      await chat.stop();
      await sending;
      await until(() => closed.length === 1, 'the run ended and its agent was let go');

      const report = await storedLog('chat-c');
      expect(report).toEqual({ ok: true, violations: [] });
      const reloaded = await get('chat-c');
      const calls = reloaded.messages.at(-1)?.parts.filter((part) => part.type === 'tool-wait') ?? [];
      expect(calls.map((call) => ('state' in call ? call.state : null))).toEqual(['output-error', 'output-error']);
      expect(calls[0]).toMatchObject({ errorText: 'aborted: the run was cancelled before this tool call finished' });
    });

    it('a message sent while the run works steers it: its response carries the run from the turn that takes it', async () => {
      const { tool: slow, started } = slowTool();
      const { handler, get, storedLog } = server(
        [{ text: 'Working on it.', toolCalls: [{ id: 's1', name: 'slow' }] }, { text: 'OK, doing that instead.' }],
        [slow],
      );
      const chat = new NodeChat(handler, { id: 'chat-d' });

      const first = chat.sendMessage({ text: 'Do the slow thing.' });
      await started.promise;
      await until(() => chat.status === 'streaming', 'the first response streams');
      const second = chat.sendMessage({ text: 'Actually, do something else.' });
      await Promise.all([first, second]);
      await until(() => chat.messages.at(-1)?.metadata?.status === 'completed', 'the run completes');

      expect(chat.errors).toEqual([]);
      const shown = chat.messages.map((message) => [message.role, texts(message), message.metadata?.status]);
      expect(shown).toEqual([
        ['user', ['Do the slow thing.'], undefined],
        ['assistant', ['Working on it.'], 'continued'],
        ['user', ['Actually, do something else.'], undefined],
        ['assistant', ['OK, doing that instead.'], 'completed'],
      ]);
      expect(chat.messages[1]?.parts.find((part) => part.type === 'tool-slow')).toMatchObject({
        state: 'output-error',
        errorText: 'cancelled: steering (the user sent a new message; this call was interrupted)',
      });
      expect(chat.messages[3]?.parts.find((part) => part.type === 'data-steering')).toMatchObject({
        data: { turnIndex: 1, messages: ['Actually, do something else.'] },
      });
      const reloaded = await get('chat-d');
      expect(reloaded.messages.map((message) => [message.role, texts(message)])).toEqual(
        shown.map(([role, t]) => [role, t]),
      );
      expect(await storedLog('chat-d')).toEqual({ ok: true, violations: [] });
    });

    it('a message the run ends before taking starts the next run (never lost)', async () => {
      const { tool: slow, started } = slowTool();
      // One turn per run: the run ends after the interrupted turn, with the message still queued.
      const { handler, get, closed, storedLog } = server(
        [{ text: 'Starting.', toolCalls: [{ id: 's1', name: 'slow' }] }, { text: 'Now the other thing.' }],
        [slow],
        memoryStore(),
        { maxTurns: 1 },
      );
      const chat = new NodeChat(handler, { id: 'chat-g' });

      const first = chat.sendMessage({ text: 'Start.' });
      await started.promise;
      await until(() => chat.status === 'streaming', 'the first response streams');
      const second = chat.sendMessage({ text: 'Do the other thing.' });
      await Promise.all([first, second]);
      await until(() => chat.messages.at(-1)?.metadata?.status === 'completed', 'the next run completes');

      expect(chat.errors).toEqual([]);
      const shown = chat.messages.map((message) => [message.role, texts(message), message.metadata?.endReason]);
      expect(shown).toEqual([
        ['user', ['Start.'], undefined],
        ['assistant', ['Starting.'], 'maxTurns'],
        ['user', ['Do the other thing.'], undefined],
        ['assistant', ['Now the other thing.'], 'naturalEnd'],
      ]);
      await until(() => closed.length === 1, 'the agent is let go after the second run');
      expect((await get('chat-g')).messages.map((message) => [message.role, texts(message)])).toEqual(
        shown.map(([role, t]) => [role, t]),
      );
      expect(await storedLog('chat-g')).toEqual({ ok: true, violations: [] });
    });
  });

  describe(`chatHandler refusals (AI SDK ${dialect === 'v7' ? 7 : 6})`, () => {
    const post = (handler: (request: Request) => Promise<Response>, body: unknown) =>
      handler(new Request('http://127.0.0.1/api/chat', { method: 'POST', body: JSON.stringify(body) }));
    const errorOf = async (response: Response) => [
      response.status,
      ((await response.json()) as { error: { code: string } }).error.code,
    ];

    it('answers a request that is not a chat request with 400, a method it does not serve with 405', async () => {
      const { handler } = server([]);
      const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
      expect(await errorOf(await post(handler, { messages: [user] }))).toEqual([400, 'InvalidInput']);
      expect(await errorOf(await post(handler, { id: 'c', messages: [] }))).toEqual([400, 'InvalidInput']);
      expect(await errorOf(await post(handler, { id: 'c', messages: [user], trigger: 'regenerate-message' }))).toEqual([
        400,
        'InvalidInput',
      ]);
      const noText = { id: 'u2', role: 'user', parts: [{ type: 'file', url: 'data:,', mediaType: 'text/plain' }] };
      expect(await errorOf(await post(handler, { id: 'c', messages: [noText] }))).toEqual([400, 'InvalidInput']);
      expect(await errorOf(await handler(new Request('http://127.0.0.1/api/chat')))).toEqual([400, 'InvalidInput']);
      expect(await errorOf(await handler(new Request('http://127.0.0.1/api/chat', { method: 'PUT' })))).toEqual([
        405,
        'MethodNotAllowed',
      ]);
      const notJson = new Request('http://127.0.0.1/api/chat', { method: 'POST', body: '{' });
      expect(await errorOf(await handler(notJson))).toEqual([400, 'InvalidInput']);
    });

    it('answers with the Response agentFor throws (the app refusing a chat)', async () => {
      const handler = chatHandler({
        agentFor: (chatId) => {
          throw new Response(`not your chat: ${chatId}`, { status: 403 });
        },
      });
      const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
      const refused = await post(handler, { id: 'someone-else', messages: [user] });
      expect([refused.status, await refused.text()]).toEqual([403, 'not your chat: someone-else']);
      const read = await handler(new Request('http://127.0.0.1/api/chat?id=someone-else'));
      expect(read.status).toBe(403);
    });

    it('answers an approval nobody asked for with 409, and a stale version with 409 StaleVersion', async () => {
      const ran: string[] = [];
      const { handler } = server(
        [{ toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] }, { text: 'done' }],
        [deployTool(ran)],
      );
      const answered = (approvalId: string) => ({
        id: 'chat-e',
        messageId: 'm1',
        messages: [
          {
            id: 'm1',
            role: 'assistant',
            parts: [
              {
                type: 'tool-deploy',
                toolCallId: 'd1',
                state: 'approval-responded',
                approval: { id: approvalId, approved: true },
              },
            ],
          },
        ],
      });
      expect(await errorOf(await post(handler, answered('approval-3-7-d1')))).toEqual([409, 'UnknownToolCall']);

      const chat = new NodeChat(handler, { id: 'chat-e' });
      await chat.sendMessage({ text: 'deploy' });
      await chat.idle();
      const part = chat.messages[1]?.parts.find((p) => p.type === 'tool-deploy') as { approval: { id: string } };
      const stale = part.approval.id.replace(
        /^approval-(\d+)-/,
        (_match, version: string) => `approval-${Number(version) + 1}-`,
      );
      expect(await errorOf(await post(handler, answered(stale)))).toEqual([409, 'StaleVersion']);
      expect(ran).toEqual([]);
      // The approval is still pending, and the right version answers it.
      const response = await post(handler, answered(part.approval.id));
      expect(response.status).toBe(200);
      await response.text();
      expect(ran).toEqual(['prod']);
    });

    it('answers 409 SessionBusy while a run of the chat is in progress in another process', async () => {
      const store = memoryStore();
      const started = deferred();
      const hold = defineTool({
        name: 'hold',
        description: 'Holds.',
        parameters: z.object({}),
        execute: () => (started.resolve(), new Promise<string>(() => {})),
      });
      const elsewhere = createAgent({
        model: scriptedModel([{ toolCalls: [{ id: 'h1', name: 'hold' }] }]),
        tools: [hold],
        store,
        sessionId: 'chat-f',
      });
      await elsewhere.ready;
      const run = elsewhere.prompt('hold the session');
      await started.promise;

      const { handler, get } = server([{ text: 'never' }], [], store);
      const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello?' }] };
      expect(await errorOf(await post(handler, { id: 'chat-f', messages: [user] }))).toEqual([409, 'SessionBusy']);

      // A reload meanwhile shows what the other server's run has stored so far (the handler has the store)...
      const reloaded = await get('chat-f');
      expect(reloaded.status).toBe(200);
      expect(reloaded.messages.map((message) => [message.role, message.parts.map((part) => part.type)])).toEqual([
        ['user', ['text']],
        ['assistant', ['step-start', 'tool-hold']],
      ]);
      expect(reloaded.messages[1]?.parts[1]).toMatchObject({ state: 'input-available', toolCallId: 'h1' });
      // ...and without it, is refused like the message.
      const bare = server([{ text: 'never' }], [], store, { withoutStore: true });
      expect(await errorOf(await bare.handler(new Request('http://127.0.0.1/api/chat?id=chat-f')))).toEqual([
        409,
        'SessionBusy',
      ]);
      elsewhere.abort();
      await run.result;
      await elsewhere.close();
    });
  });
}
