import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type AgentOptions, type Message } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters } from '../support/harness.js';
import { expectTrusted, ofType, watchTheProcess } from './harness.js';

// The hostile-input contract, decisions and verdicts: an inject verdict whose messages would orphan a tool-call/result
// pair in history (a call without its result, a result without its call) is a verdict of the wrong
// shape: a policyError of its slot, counted as continue. The history never breaks.

watchTheProcess();

const PROMPT = 'clean up the build folder';
type Slot = 'preTurn' | 'preDispatch' | 'postTurn' | 'postLoop';
const SLOTS: Slot[] = ['preTurn', 'preDispatch', 'postTurn', 'postLoop'];
/** Every case: the tool turn and the closing text, whatever the policy injected. */
const COUNTERS = { turns: 2, modelCalls: 2, toolCallsRequested: 1, toolCallsExecuted: 1, tokensIn: 6, tokensOut: 4 };

const callOf = (id: string): Message => ({
  role: 'assistant',
  content: [{ type: 'toolCall', id, name: 'remove', arguments: { path: 'hijacked' } }],
  stopReason: 'toolUse',
});
const resultOf = (id: string): Message => ({
  role: 'toolResult',
  toolCallId: id,
  toolName: 'remove',
  content: 'hijacked',
  isError: false,
});

const ORPHANING: Array<[string, Message[]]> = [
  ['an assistant tool call without its result', [callOf('x1')]],
  ['a tool result without its call', [resultOf('x1')]],
  ["a result before its call (the call's result missing after it)", [resultOf('x1'), callOf('x1')]],
  ['a result answering the run’s own call c1 again', [resultOf('c1')]],
  ['a call, then a user message before its result', [callOf('x1'), { role: 'user', content: 'hijacked' }]],
  ['a pair, then one result too many', [callOf('x1'), resultOf('x1'), resultOf('x1')]],
];

function setup(slot: Slot, messages: Message[]) {
  const runs: unknown[] = [];
  const tool = defineTool({
    name: 'remove',
    description: 'removes',
    parameters: z.object({ path: z.string() }),
    execute: (args) => (runs.push(args), 'removed'),
  });
  let calls = 0;
  const policy = () => (calls++ === 0 ? { verdict: 'inject', messages } : { verdict: 'continue' });
  const model = scriptedModel([
    { toolCalls: [{ id: 'c1', name: 'remove', arguments: { path: 'build' } }], usage: { input: 3, output: 2 } },
    { text: 'done', usage: { input: 3, output: 2 } },
  ]);
  const agent = createAgent({ model, tools: [tool], policies: { [slot]: [policy] } as AgentOptions['policies'] });
  return { agent, runs, model };
}

describe('inject verdicts that would orphan tool-call/result pairs: a policyError, never a broken history', () => {
  const cases = SLOTS.flatMap((slot) => ORPHANING.map(([name, messages]) => [slot, name, messages] as const));

  it.each(cases)('%s: %s', async (slot, _name, messages) => {
    const { agent, runs } = setup(slot, messages);
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);

    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    const errors = ofType(events, 'policyError');
    expect(errors.map((event) => event.slot)).toEqual([slot]);
    expect(errors[0]?.message).toMatch(/^policy returned an invalid verdict: the injected messages would break/);
    expect(JSON.stringify(result.messages)).not.toContain('hijacked');
    expect(runs).toEqual([{ path: 'build' }]);
    expectCounters(result.counters, COUNTERS);
  });

  it('a complete pair (a call and its result) is injected as it is', async () => {
    const { agent, model } = setup('preTurn', [callOf('x1'), resultOf('x1')]);
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(ofType(events, 'policyError')).toEqual([]);
    expect(result.messages.slice(0, 3)).toEqual([{ role: 'user', content: PROMPT }, callOf('x1'), resultOf('x1')]);
    expect(model.requests[0]?.messages.slice(-2)).toEqual([callOf('x1'), resultOf('x1')]);
    expectCounters(result.counters, COUNTERS);
  });
});
