import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { createAgent, defineTool } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished } from '../support/harness.js';
import { called, ofType, result, searchTool, user } from './issue5-fixtures.js';

// Report mode (R10–R12): a run always ends with a report — the model's, or a synthetic one — or a
// typed error; the guidance after a turn without work says why the turn did not count.

const REPORT = { toolName: 'report' };
const ENDING =
  'Report mode: continue the task with the tools available, and end by calling the report tool "report" with valid arguments.';

/** A report tool that fails its first `failures` calls (an isError result), then files the report. */
function flakyReport(failures: number) {
  let calls = 0;
  return defineTool({
    name: 'report',
    description: 'Files the final report.',
    parameters: z.object({ summary: z.string() }),
    execute: () => (calls++ < failures ? { content: 'report service down', isError: true } : 'report filed'),
  });
}

const progress = defineTool({
  name: 'progress',
  description: 'Reports progress.',
  parameters: z.object({ note: z.string() }),
  progress: true,
  execute: ({ note }) => `noted ${note}`,
});

const reportCall = (id: string) => ({ id, name: 'report', arguments: { summary: 'all green' } });

describe('R11/R12 report mode: a failing report tool and a progress-only turn', () => {
  it('R11 a report call that fails counts as work: it stays in history, the model reports again and it is accepted', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel([{ toolCalls: [reportCall('r1')] }, { toolCalls: [reportCall('r2')] }], { clock });
    const agent = createAgent({ model, clock, tools: [flakyReport(1)], finalReport: REPORT });
    const { result: outcome, events } = await finished(agent.prompt('Report'));

    expect(outcome).toMatchObject({
      status: 'completed',
      endReason: 'finalReport',
      finalReport: { source: 'model', arguments: { summary: 'all green' } },
    });
    expect(outcome.messages).toEqual([
      user('Report'),
      called([reportCall('r1')]),
      result('r1', 'report', 'report service down', true),
      called([reportCall('r2')]),
      result('r2', 'report', 'report filed'),
    ]);
    expect(ofType(events, 'retry')).toEqual([]);
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      toolCallsFailed: 1,
    });
  });

  it('R12 a report tool that always fails: the run ends at max turns with a synthetic report, status failed', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel([{ toolCalls: [reportCall('r1')] }, { toolCalls: [reportCall('r2')] }], { clock });
    const agent = createAgent({ model, clock, tools: [flakyReport(9)], finalReport: REPORT, maxTurns: 2 });
    const { result: outcome, events } = await finished(agent.prompt('Report'));

    expect(outcome).toMatchObject({ status: 'failed', endReason: 'maxTurns' });
    expect(outcome.finalReport).toEqual({
      source: 'synthetic',
      arguments: { status: 'failed', reason: 'maxTurns', lastAssistantText: '' },
    });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      toolCallsFailed: 2,
    });
  });

  it('R10 a turn that only ran a progress tool does not count; the guidance says so and names the report tool', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [
        { toolCalls: [{ id: 'p1', name: 'progress', arguments: { note: 'half way' } }] },
        { toolCalls: [reportCall('r1')] },
      ],
      { clock },
    );
    const agent = createAgent({
      model,
      clock,
      tools: [progress, searchTool(), flakyReport(0)],
      finalReport: REPORT,
      retry: { jitter: false },
    });
    const { result: outcome, events } = await finished(agent.prompt('Report'));

    const guidance =
      'Your last reply ran no tool that counts as work and sent no valid report, so it did not count ' +
      `(progress: a progress report only). ${ENDING}`;
    expect(model.requests[1]?.messages).toEqual([user('Report'), user(guidance)]);
    expect(outcome).toMatchObject({ status: 'completed', endReason: 'finalReport' });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      turnsFailed: 1,
      modelCalls: 2,
      retries: 1,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      failureCodes: { reportTurnWithoutWork: 1 },
    });
  });

  it('a report tool marked progress: true is refused up front (InvalidOptions naming finalReport.toolName)', () => {
    const report = defineTool({ ...flakyReport(0), progress: true });
    expect(() => createAgent({ model: scriptedModel([]), tools: [report], finalReport: REPORT })).toThrow(
      expect.objectContaining({
        name: 'AgentError',
        code: 'InvalidOptions',
        message: expect.stringMatching(
          /^createAgent: finalReport\.toolName: the report tool "report" is marked progress/,
        ),
      }),
    );
  });
});
