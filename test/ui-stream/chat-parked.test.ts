import { describe, expect, it } from 'vitest';
import { createAgent, memoryStore, type SessionStore } from 'agentchart';
import { chatHandler, type AgentchartUIMessage, type ChatRequestHandler } from 'agentchart/ai-sdk-ui';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { deferred, settle } from '../support/harness.js';
import { server, texts } from './chat-scenarios.js';
import { answerApproval, clientChunks, clientMessage } from './client.js';
import { NodeChat, until } from './node-chat.js';
import { deployTool } from './tools.js';

/**
 * A run parked at a durable approval, its handle let go with the request that asked: the next
 * request of the chat — the answer, a new message, a reload — takes a fresh handle on the session.
 */
describe('chatHandler: a run parked at an approval', () => {
  const post = (handler: (request: Request) => Promise<Response>, body: unknown) =>
    handler(new Request('http://127.0.0.1/api/chat', { method: 'POST', body: JSON.stringify(body) }));
  const user = (id: string, text: string) => ({ id, role: 'user', parts: [{ type: 'text', text }] });
  const deployPart = (message: AgentchartUIMessage | undefined) =>
    message?.parts.find((part) => part.type === 'tool-deploy') as
      { state: string; approval: { id: string }; errorText?: string } | undefined;

  it('an answer sent the moment the response ends is taken by a fresh handle, once the one that asked is let go', async () => {
    const ran: string[] = [];
    // A server store (no synchronous calls) whose lease release takes a while: the first one waits for the test.
    const { acquireSync: _a, commitStepSync: _c, loadSync: _l, ...inner } = memoryStore();
    const releasing = deferred();
    let released = 0;
    const store: SessionStore = {
      ...inner,
      release: async (sessionId, lease) => {
        await releasing.promise;
        released++;
        return inner.release(sessionId, lease);
      },
    };
    const { handler, agents, closed, storedLog } = server(
      [
        { text: 'Deploying.', toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] },
        { text: 'Live.' },
      ],
      [deployTool(ran)],
      store,
    );
    const ask = user('u1', 'Deploy to prod.');
    const asked = await clientMessage(await post(handler, { id: 'fast', messages: [ask] }));
    const approvalId = deployPart(asked)?.approval.id ?? '';
    expect(asked.metadata).toMatchObject({ status: 'awaitingApproval' });

    // No wait at all between the end of the first response and the answer.
    const answered = answerApproval(asked, approvalId, true);
    const answering = post(handler, { id: 'fast', messages: [ask, answered], messageId: asked.id });
    await settle();
    expect(released).toBe(0);
    releasing.resolve();
    const response = await answering;
    expect(response.status).toBe(200);
    const continued = await clientMessage(response, answered);

    expect(continued.id).toBe(asked.id);
    expect(continued.metadata).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(texts(continued)).toEqual(['Deploying.', 'Live.']);
    expect(deployPart(continued)).toMatchObject({ state: 'output-available', output: 'deployed to prod' });
    expect(ran).toEqual(['prod']);
    // The handle that asked was let go before the answer's own handle continued the run.
    expect(agents).toHaveLength(2);
    expect(closed[0]).toBe(agents[0]);
    await until(() => new Set(closed).size === 2, 'the answering handle is let go with the run');
    expect(await storedLog('fast')).toEqual({ ok: true, violations: [] });
  });

  it('a message while the approval waits steers the parked run: the call is withdrawn and never runs, the message answered', async () => {
    const ran: string[] = [];
    const { handler, get, storedLog } = server(
      [
        { text: 'Deploying.', toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] },
        { text: 'Fine, no deploy.' },
      ],
      [deployTool(ran)],
    );
    const chat = new NodeChat(handler, { id: 'steer-parked' });
    await chat.sendMessage({ text: 'Deploy to prod.' });
    await chat.idle();
    expect(deployPart(chat.messages[1])).toMatchObject({ state: 'approval-requested' });

    await chat.sendMessage({ text: 'No, wait: do not deploy.' });
    await until(() => chat.messages.at(-1)?.metadata?.status === 'completed' || chat.errors.length > 0, 'the run ends');

    expect(chat.errors).toEqual([]);
    expect(ran).toEqual([]);
    expect(chat.messages.map((message) => [message.role, texts(message), message.metadata?.status])).toEqual([
      ['user', ['Deploy to prod.'], undefined],
      ['assistant', ['Deploying.'], 'awaitingApproval'],
      ['user', ['No, wait: do not deploy.'], undefined],
      ['assistant', ['Fine, no deploy.'], 'completed'],
    ]);
    expect(chat.messages[3]?.parts.find((part) => part.type === 'data-steering')).toMatchObject({
      data: { messages: ['No, wait: do not deploy.'] },
    });

    // A reload shows the withdrawn call answered, as the model read it.
    const reloaded = await get('steer-parked');
    expect(reloaded.messages.map((message) => [message.role, texts(message)])).toEqual([
      ['user', ['Deploy to prod.']],
      ['assistant', ['Deploying.']],
      ['user', ['No, wait: do not deploy.']],
      ['assistant', ['Fine, no deploy.']],
    ]);
    expect(deployPart(reloaded.messages[1])?.state).toMatch(/^output-(error|denied)$/);
    // The stored log checks: the withdrawn request is resolved (denied).
    expect((await storedLog('steer-parked')).violations).toEqual([]);
  });

  // The turn a fresh handle resumes from the store waits again for a request published before: a steer
  // that withdraws it resolves it (toolApprovalResolved, denied) before the call gets its result.
  it('the stored log of a parked run steered from a fresh handle resolves the withdrawn request', async () => {
    const { handler, storedLog } = server(
      [{ text: 'Deploying.', toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] }, { text: 'No.' }],
      [deployTool()],
    );
    const chat = new NodeChat(handler, { id: 'steer-log' });
    await chat.sendMessage({ text: 'Deploy to prod.' });
    await chat.idle();
    await chat.sendMessage({ text: 'Do not deploy.' });
    await until(() => chat.messages.at(-1)?.metadata?.status === 'completed' || chat.errors.length > 0, 'the run ends');
    expect(await storedLog('steer-log')).toEqual({ ok: true, violations: [] });
  });
});

describe('chatHandler: one approval answered through two servers at once', () => {
  it('the tool runs once; the other response is refused (answered already, or the session busy with it)', async () => {
    const ran: string[] = [];
    // A server store (no synchronous calls): each server checks the answer again under the session's lease.
    const { acquireSync: _a, commitStepSync: _c, loadSync: _l, ...store } = memoryStore();
    const model = scriptedModel([
      { text: 'Deploying.', toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] },
      { text: 'Live.' },
    ]);
    const deploy = deployTool(ran);
    const serve = () =>
      chatHandler({ agentFor: (chatId) => createAgent({ model, tools: [deploy], store, sessionId: chatId }) });
    const [first, second] = [serve(), serve()];
    const post = (handler: ChatRequestHandler, body: unknown) =>
      handler(new Request('http://127.0.0.1/api/chat', { method: 'POST', body: JSON.stringify(body) }));
    const ask = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Deploy.' }] };
    const asked = await clientMessage(await post(first, { id: 'twice', messages: [ask] }));
    const approvalId = (asked.parts.find((part) => part.type === 'tool-deploy') as { approval: { id: string } })
      .approval.id;
    const answered = answerApproval(asked, approvalId, true);
    const body = { id: 'twice', messages: [ask, answered], messageId: asked.id };

    // Each response: the run to its end, or the refusal — a 409 before any stream, or an error chunk
    // (the answer checked again under the session's lease, once the other server had taken it).
    const outcomes = await Promise.all(
      [first, second].map(async (handler) => {
        const response = await post(handler, body);
        if (response.status !== 200) {
          const { error } = (await response.json()) as { error: { code: string } };
          return `${response.status} ${error.code}`;
        }
        const chunks = await clientChunks(response);
        const refusal = chunks.find((chunk) => chunk.type === 'error');
        if (refusal) return `error chunk ${refusal.errorText.split(':')[0]}`;
        return (chunks.at(-1) as { messageMetadata?: { status?: string } }).messageMetadata?.status;
      }),
    );

    expect(ran).toEqual(['prod']);
    expect(outcomes).toContain('completed');
    expect(outcomes.filter((outcome) => outcome !== 'completed')).toEqual([
      expect.stringMatching(
        /^(409 (UnknownToolCall|StaleVersion|SessionBusy)|error chunk (UnknownToolCall|StaleVersion|SessionBusy))$/,
      ),
    ]);
    const checkpoint = await store.load('twice');
    expect(checkInvariants(await store.loadEvents('twice'), checkpoint?.history)).toEqual({ ok: true, violations: [] });
  });
});
