import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type Agent, type AgentRun, type Message } from 'agentchart';
import { toUIMessageStream, toUIMessageStreamResponse, type AgentchartUIMessage } from 'agentchart/ai-sdk-ui';
import { scriptedModel } from 'agentchart/testing';
import { deferred, expectInvariants, finished, settle } from '../support/harness.js';
import {
  answerApproval,
  clientChunks,
  clientMessage,
  contentParts,
  dataParts,
  expectedParts,
  partsLike,
} from './client.js';
import { deployTool } from './tools.js';

const noArgs = z.object({});

/** A tool that reports progress twice, then answers. */
const readTool = defineTool({
  name: 'read',
  description: 'Read a file.',
  parameters: z.object({ path: z.string() }),
  async execute({ path }, ctx) {
    await ctx.update({ percent: 50 });
    await ctx.update({ percent: 100 });
    return `contents of ${path}`;
  },
});
const failingTool = defineTool({
  name: 'fail',
  description: 'Always fails.',
  parameters: noArgs,
  execute: () => {
    throw new Error('disk on fire');
  },
});
/** A tool that starts, tells the test, and never finishes on its own (it ignores its signal). */
function stuckTool(name: string) {
  const started = deferred();
  const tool = defineTool({
    name,
    description: `${name} (never finishes by itself)`,
    parameters: noArgs,
    execute: () => (started.resolve(), new Promise<string>(() => {})),
  });
  return { tool, started: started.promise };
}

/** The run's own messages (after the prompt). */
const runMessages = (messages: readonly Message[], promptCount = 1) => messages.slice(promptCount);

/**
 * The stream of a run, read back by the AI SDK's own client (its chat transport and
 * readUIMessageStream), gives one assistant message whose parts match the run's messages.
 */
export function describeUIStream(dialect: 'v6' | 'v7'): void {
  const v7 = dialect === 'v7';

  describe(`toUIMessageStream on AI SDK ${dialect === 'v7' ? 7 : 6}`, () => {
    it('text and reasoning: one message, one step, the run in the metadata', async () => {
      const model = scriptedModel([{ thinking: 'The user greets me.', text: 'Hello! How can I help?' }]);
      const run = createAgent({ model, streaming: 'live' }).prompt('Hi!');
      const message = await clientMessage(await toUIMessageStreamResponse(run));
      const { result, events } = await finished(run);

      expect(message.id).toBe(run.runId);
      expect(message.role).toBe('assistant');
      expect(message.parts).toEqual(partsLike(expectedParts(runMessages(result.messages), { dialect })));
      expect(message.parts.map((part) => part.type)).toEqual(['step-start', 'reasoning', 'text']);
      expect(message.metadata).toEqual({ runId: run.runId, status: 'completed', endReason: 'naturalEnd' });
      expectInvariants(events, result.messages);
    });

    it('parallel tools and a failing tool: one tool part per call with its input and output or error; progress as data parts', async () => {
      const model = scriptedModel([
        {
          text: 'Reading both files.',
          toolCalls: [
            { id: 'r1', name: 'read', arguments: { path: 'a.ts' } },
            { id: 'r2', name: 'read', arguments: { path: 'b.ts' } },
            { id: 'f1', name: 'fail', arguments: {} },
          ],
        },
        { text: 'One failed.' },
      ]);
      const run = createAgent({ model, tools: [readTool, failingTool] }).prompt('read them');
      const chunks = await clientChunks(await toUIMessageStreamResponse(run));
      const message = await clientMessage(await toUIMessageStreamResponse(run));
      const { result } = await finished(run);

      const expected = expectedParts(runMessages(result.messages), { dialect });
      expect(contentParts(message)).toEqual(partsLike(expected));
      expect(message.parts.filter((part) => part.type === 'step-start')).toHaveLength(2);
      expect(contentParts(message)).toContainEqual(
        expect.objectContaining({
          type: 'tool-fail',
          state: 'output-error',
          errorText: expect.stringContaining('disk on fire'),
        }),
      );
      // The latest progress of each call (each update replaces its call's part).
      expect(dataParts(message, 'tool-progress')).toEqual([
        { toolCallId: 'r1', toolName: 'read', partial: { percent: 100 } },
        { toolCallId: 'r2', toolName: 'read', partial: { percent: 100 } },
      ]);
      // Each call's part streamed its input first: input-streaming (deltas) → input-available → output.
      const callChunks = chunks.flatMap((chunk) =>
        'toolCallId' in chunk && chunk.toolCallId === 'r1' ? [chunk.type] : [],
      );
      expect(callChunks[0]).toBe('tool-input-start');
      expect(callChunks.slice(-2)).toEqual(['tool-input-available', 'tool-output-available']);
      expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    });

    it('a progress update JSON cannot hold (a BigInt, a cycle) is refused at the tool: the stream carries what it sends next', async () => {
      const cyclic: Record<string, unknown> = { step: 2 };
      cyclic.self = cyclic;
      const oddTool = defineTool({
        name: 'odd',
        description: 'Reports progress JSON cannot hold.',
        parameters: z.object({ kind: z.enum(['bigint', 'cycle']) }),
        async execute({ kind }, ctx) {
          // Refused at the call (InvalidInput), with or without a store: nothing of it is published.
          await ctx.update(kind === 'bigint' ? { bytes: 10n } : cyclic).catch(() => ctx.update({ refused: kind }));
          return kind;
        },
      });
      const model = scriptedModel([
        {
          toolCalls: [
            { id: 'b1', name: 'odd', arguments: { kind: 'bigint' } },
            { id: 'c1', name: 'odd', arguments: { kind: 'cycle' } },
          ],
        },
        { text: 'Both reported.' },
      ]);
      const run = createAgent({ model, tools: [oddTool] }).prompt('report');
      const message = await clientMessage(await toUIMessageStreamResponse(run));
      const { result } = await finished(run);

      expect(dataParts(message, 'tool-progress')).toEqual([
        { toolCallId: 'b1', toolName: 'odd', partial: { refused: 'bigint' } },
        { toolCallId: 'c1', toolName: 'odd', partial: { refused: 'cycle' } },
      ]);
      expect(contentParts(message)).toEqual(partsLike(expectedParts(runMessages(result.messages), { dialect })));
      expect(message.metadata).toMatchObject({ status: 'completed' });
    });

    it('a steered batch: the interrupted call ends as output-error with its synthetic text; the receipt is a data part of the next step', async () => {
      const clock = new SimulatedClock();
      const slow = stuckTool('slow');
      const fast = defineTool({ name: 'fast', description: 'fast', parameters: noArgs, execute: () => 'fast done' });
      const model = scriptedModel([
        {
          text: 'Running both.',
          toolCalls: [
            { id: 'c1', name: 'fast' },
            { id: 'c2', name: 'slow' },
          ],
        },
        { text: 'Switching.' },
      ]);
      const agent = createAgent({ model, tools: [fast, slow.tool], clock });
      const run = agent.prompt('do both');
      const reading = clientMessage(await toUIMessageStreamResponse(run));
      await slow.started;
      await settle();
      const receipt = agent.steer('stop, do this instead');
      await settle();
      clock.increment(250);
      const message = await reading;
      const { result, events } = await finished(run);

      expect(await receipt).toEqual({ status: 'delivered', turnIndex: 1 });
      const ownMessages = runMessages(result.messages).filter((m) => m.role !== 'user');
      expect(contentParts(message)).toEqual(partsLike(expectedParts(ownMessages, { dialect })));
      expect(contentParts(message)).toContainEqual(
        expect.objectContaining({
          toolCallId: 'c2',
          state: 'output-error',
          errorText: 'cancelled: steering (the user sent a new message; this call was interrupted)',
        }),
      );
      expect(dataParts(message, 'steering')).toEqual([{ turnIndex: 1, messages: ['stop, do this instead'] }]);
      // The receipt belongs to the step of the turn that delivered it.
      const types = message.parts.map((part) => part.type);
      expect(types.indexOf('data-steering')).toBeGreaterThan(types.lastIndexOf('step-start'));
      expectInvariants(events, result.messages);
    });

    it('an abort during the tools: every call answered (output-error "aborted: …"), the run aborted in the metadata', async () => {
      const stuck = stuckTool('wait');
      const model = scriptedModel([
        {
          text: 'Waiting.',
          toolCalls: [
            { id: 'w1', name: 'wait' },
            { id: 'w2', name: 'wait' },
          ],
        },
      ]);
      const agent = createAgent({ model, tools: [stuck.tool] });
      const run = agent.prompt('wait for it');
      const response = await toUIMessageStreamResponse(run);
      await stuck.started;
      agent.abort('stopped by the user');
      const chunks = await clientChunks(response);
      const message = await clientMessage(await toUIMessageStreamResponse(run));
      const { result, events } = await finished(run);

      expect(result.status).toBe('aborted');
      expect(contentParts(message)).toEqual(partsLike(expectedParts(runMessages(result.messages), { dialect })));
      const states = contentParts(message).flatMap((part) => ('toolCallId' in part ? [part.state] : []));
      expect(states).toEqual(['output-error', 'output-error']);
      expect(message.metadata).toEqual({
        runId: run.runId,
        status: 'aborted',
        endReason: 'aborted',
        error: { code: 'aborted', message: 'stopped by the user' },
      });
      expect(chunks.slice(-2)).toEqual([
        { type: 'abort', reason: 'stopped by the user' },
        expect.objectContaining({ type: 'finish', finishReason: 'other' }),
      ]);
      expectInvariants(events, result.messages);
    });

    it('an abort while the model streams: the partial text stays, the step and the message end', async () => {
      const model = scriptedModel([{ text: 'Let me think about', stall: true }]);
      const agent = createAgent({ model, streaming: 'live' });
      const run = agent.prompt('a long question');
      const chunks: string[] = [];
      const reader = toUIMessageStream(run).getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        chunks.push(read.value.type);
        if (read.value.type === 'text-delta' && chunks.filter((type) => type === 'text-delta').length === 1) {
          agent.abort();
        }
      }
      const { result } = await finished(run);
      const message = await clientMessage(await toUIMessageStreamResponse(run));

      expect(result.status).toBe('aborted');
      expect(chunks.slice(0, 3)).toEqual(['start', 'start-step', 'text-start']);
      expect(chunks.slice(-4)).toEqual(['text-end', 'finish-step', 'abort', 'finish']);
      expect(contentParts(message)).toEqual(partsLike(expectedParts(runMessages(result.messages), { dialect })));
    });

    it('approvals decided by a handler: approved calls run, a denial shows its reason', async () => {
      const ran: string[] = [];
      const model = scriptedModel([
        {
          toolCalls: [
            { id: 'd1', name: 'deploy', arguments: { env: 'staging' } },
            { id: 'd2', name: 'deploy', arguments: { env: 'prod' } },
          ],
        },
        { text: 'Staging is deployed; prod was refused.' },
      ]);
      const approval = ({ arguments: args }: { arguments: Record<string, unknown> }) =>
        args.env === 'prod' ? { approved: false as const, reason: 'not on Fridays' } : { approved: true as const };
      const run = createAgent({ model, tools: [deployTool(ran)], approval }).prompt('deploy everywhere');
      const message = await clientMessage(await toUIMessageStreamResponse(run));
      const { result } = await finished(run);

      expect(ran).toEqual(['staging']);
      const expectation = { dialect, automatic: ['d1', 'd2'], denied: v7 ? ['d2'] : [] };
      expect(contentParts(message)).toEqual(partsLike(expectedParts(runMessages(result.messages), expectation)));
      const d2 = contentParts(message).find((part) => 'toolCallId' in part && part.toolCallId === 'd2');
      expect(d2).toMatchObject(
        v7
          ? { state: 'output-denied', approval: { approved: false, reason: 'not on Fridays', isAutomatic: true } }
          : { state: 'output-error', errorText: 'rejected: not on Fridays' },
      );
    });

    describe('a durable approval (a store and no approval handler)', () => {
      const setup = async () => {
        const ran: string[] = [];
        const model = scriptedModel([
          { text: 'Deploying.', toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] },
          { text: 'Done.' },
        ]);
        const agent = createAgent({ model, tools: [deployTool(ran)], store: memoryStore(), sessionId: 'chat-1' });
        await agent.ready;
        return { agent, ran, run: agent.prompt('deploy to prod') };
      };

      /** The first response: it ends with the approval request, while the run waits. */
      async function asked(agent: Agent, run: AgentRun) {
        const message = await clientMessage(await toUIMessageStreamResponse(run, { agent }));
        const part = contentParts(message).find((p) => 'toolCallId' in p && p.toolCallId === 'd1');
        if (!part || !('approval' in part) || !part.approval)
          throw new Error(`no approval part: ${JSON.stringify(part)}`);
        return { message, part, approvalId: part.approval.id };
      }

      it('is the protocol approval request; the answer continues the same message to the run end', async () => {
        const { agent, ran, run } = await setup();
        const { message, part, approvalId } = await asked(agent, run);
        const [pending] = agent.pendingApprovals();

        expect(part).toMatchObject({ type: 'tool-deploy', state: 'approval-requested', input: { env: 'prod' } });
        expect(approvalId).toContain(`-${pending?.version}-`);
        expect(message.metadata).toEqual({ runId: run.runId, status: 'awaitingApproval' });
        expect(agent.running).toBe(true);
        expect(ran).toEqual([]);

        // The user approves in the UI; the server answers the approval and streams the rest.
        const answered = answerApproval(message, approvalId, true);
        agent.resolveApproval('d1', { approved: true }, { version: pending!.version });
        const response = await toUIMessageStreamResponse(run, {
          agent,
          messageId: message.id,
          continuesAfter: approvalId,
        });
        const final = await clientMessage(response, answered);
        const { result, events } = await finished(run);

        expect(ran).toEqual(['prod']);
        expect(final.id).toBe(message.id);
        const expectation = { dialect, asked: { d1: approvalId } };
        expect(final.parts).toEqual(partsLike(expectedParts(runMessages(result.messages), expectation)));
        expect(final.metadata).toEqual({ runId: run.runId, status: 'completed', endReason: 'naturalEnd' });
        expectInvariants(events, result.messages);
      });

      it('answered through a fresh handle (the one that asked let go): the run resolveApproval returns continues the same message', async () => {
        const ran: string[] = [];
        const store = memoryStore();
        const model = scriptedModel([
          { text: 'Deploying.', toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] },
          { text: 'Done.' },
        ]);
        const handle = () => createAgent({ model, tools: [deployTool(ran)], store, sessionId: 'chat-2' });
        const first = handle();
        await first.ready;
        const { message, approvalId } = await asked(first, first.prompt('deploy to prod'));
        await first.close();

        // Another request (another process, maybe): a new handle on the stored session answers.
        const later = handle();
        await later.ready;
        const [pending] = later.pendingApprovals();
        const answered = answerApproval(message, approvalId, true);
        const continued = later.resolveApproval('d1', { approved: true }, { version: pending!.version });
        const response = await toUIMessageStreamResponse(continued, {
          agent: later,
          messageId: message.id,
          continuesAfter: approvalId,
        });
        const final = await clientMessage(response, answered);
        const result = await continued.result;
        await later.close();

        expect(ran).toEqual(['prod']);
        expect(final.id).toBe(message.id);
        const expectation = { dialect, asked: { d1: approvalId } };
        expect(final.parts).toEqual(partsLike(expectedParts(runMessages(result.messages), expectation)));
        expect(final.metadata).toEqual({ runId: continued.runId, status: 'completed', endReason: 'naturalEnd' });
        expectInvariants(await store.loadEvents('chat-2'), result.messages);
      });

      it('a denial ends the call as output-denied with the reason', async () => {
        const { agent, ran, run } = await setup();
        const { message, approvalId } = await asked(agent, run);
        const [pending] = agent.pendingApprovals();

        const answered = answerApproval(message, approvalId, false, 'not today');
        agent.resolveApproval('d1', { approved: false, reason: 'not today' }, { version: pending!.version });
        const response = await toUIMessageStreamResponse(run, {
          agent,
          messageId: message.id,
          continuesAfter: approvalId,
        });
        const final = await clientMessage(response, answered);
        const { result } = await finished(run);

        expect(ran).toEqual([]);
        const expectation = { dialect, asked: { d1: approvalId }, denied: ['d1'] };
        expect(final.parts).toEqual(partsLike(expectedParts(runMessages(result.messages), expectation)));
        expect(final.parts).toContainEqual(
          expect.objectContaining({
            state: 'output-denied',
            approval: expect.objectContaining({ reason: 'not today' }),
          }),
        );
      });
    });
  });
}
