import { describe, expect, it } from 'vitest';
import { createAgent, memoryStore } from 'agentchart';
import { chatHandler, type ChatRequestHandler } from 'agentchart/ai-sdk-ui';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { approvalsAnswered, NodeChat, until } from './node-chat.js';
import { deployTool } from './tools.js';

/**
 * Two servers (two processes behind a load balancer: separate handlers, one store): the page's
 * approval answer reaches the server that did not start the run. Sessions are handles: the run that
 * waits for a durable approval parks (stored, its lease let go), and the handle that answers it takes
 * the run over and streams the rest.
 */
describe('a durable approval answered through another server', () => {
  const setup = () => {
    const store = memoryStore();
    const ran: string[] = [];
    const deploy = deployTool(ran);
    const model = scriptedModel([
      { text: 'Deploying.', toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] },
      { text: 'Prod is live.' },
    ]);
    const server = () =>
      chatHandler({ agentFor: (chatId) => createAgent({ model, tools: [deploy], store, sessionId: chatId }) });
    const [first, second] = [server(), server()];
    // A load balancer: the first request goes to one server, every later one to the other.
    let requests = 0;
    const balanced: ChatRequestHandler = (request) => (requests++ === 0 ? first : second)(request);
    return { store, ran, balanced };
  };

  it('the answer runs the tool once and the rest of the run streams into the same message', async () => {
    const { store, ran, balanced } = setup();
    const chat = new NodeChat(balanced, { id: 'handoff', sendAutomaticallyWhen: approvalsAnswered });

    await chat.sendMessage({ text: 'Deploy to prod.' });
    await chat.idle();
    const part = chat.messages[1]?.parts.find((p) => p.type === 'tool-deploy') as { approval: { id: string } };
    expect(part).toMatchObject({ state: 'approval-requested' });

    await chat.addToolApprovalResponse({ id: part.approval.id, approved: true });
    await until(() => chat.messages[1]?.metadata?.status === 'completed' || chat.errors.length > 0, 'the run ends');

    expect(chat.errors).toEqual([]);
    expect(ran).toEqual(['prod']);
    expect(chat.messages[1]?.parts.find((p) => p.type === 'tool-deploy')).toMatchObject({
      state: 'output-available',
      output: 'deployed to prod',
    });
    const checkpoint = await store.load('handoff');
    expect(checkInvariants(await store.loadEvents('handoff'), checkpoint?.history)).toEqual({
      ok: true,
      violations: [],
    });
  });
});
