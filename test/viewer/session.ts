import { z } from 'zod';
import { createAgent, defineTool, type AgentEvent, type RunResult } from 'agentchart';
import { createTraceRecorder } from 'agentchart/trace';
import { scriptedModel } from 'agentchart/testing';

/**
 * A real scripted session, recorded: turn 0 asks for three tools at once (one needs approval), turn 1
 * for a tool that throws, turn 2 answers. No timers anywhere, so the order of everything is fixed;
 * the recorder's clock ticks 1 ms per entry, so every timestamp is exact (`t = i + 1`).
 */

export interface RecordedSession {
  jsonl: string;
  result: RunResult;
  events: AgentEvent[];
}

export const FINAL_TEXT = 'The answer is 42; the note is saved.';

export async function recordSession(): Promise<RecordedSession> {
  const lookup = defineTool({
    name: 'lookup',
    description: 'Looks a term up.',
    parameters: z.object({ term: z.string() }),
    async execute({ term }, ctx) {
      await ctx.update({ percent: 50 });
      return `${term}: forty-two`;
    },
  });
  const sum = defineTool({
    name: 'sum',
    description: 'Adds numbers.',
    parameters: z.object({ values: z.array(z.number()) }),
    async execute({ values }, ctx) {
      await ctx.update({ percent: 33 });
      await ctx.update({ percent: 66 });
      return String(values.reduce((total, value) => total + value, 0));
    },
  });
  const writeNote = defineTool({
    name: 'write_note',
    description: 'Saves a note.',
    parameters: z.object({ text: z.string() }),
    requiresApproval: true,
    async execute() {
      return 'saved';
    },
  });
  const broken = defineTool({
    name: 'broken',
    description: 'Always fails.',
    parameters: z.object({}),
    async execute() {
      throw new Error('disk on fire');
    },
  });
  const model = scriptedModel(
    [
      {
        text: 'Looking it up.',
        toolCalls: [
          { id: 'c1', name: 'lookup', arguments: { term: 'answer' } },
          { id: 'c2', name: 'sum', arguments: { values: [40, 2] } },
          { id: 'c3', name: 'write_note', arguments: { text: '42' } },
        ],
      },
      { toolCalls: [{ id: 'c4', name: 'broken', arguments: {} }] },
      { text: FINAL_TEXT },
    ],
    { name: 'scripted-viewer' },
  );
  let tick = 0;
  const trace = createTraceRecorder({ now: () => tick++ });
  const agent = createAgent({
    model,
    tools: [lookup, sum, writeNote, broken],
    approval: () => ({ approved: true }),
    inspect: trace.inspect,
  });
  const events: AgentEvent[] = [];
  agent.events.subscribe((event) => events.push(event));
  agent.events.subscribe(trace.events);
  const result = await agent.prompt('What is the answer? Save it.').result;
  return { jsonl: trace.toJSONL(), result, events };
}
