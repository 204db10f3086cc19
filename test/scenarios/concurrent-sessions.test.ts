import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from 'agentchart';
import type { AgentEvent } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle, ofType } from '../support/harness.js';
import { called, said, TEXT_TURN, toolResult, TOOL_TURN, turnEnds, user } from './session-fixtures.js';

// Issue 4: "A test runs 1,000 sessions concurrently on one agent each and checks every log".

const SESSIONS = 1_000;

describe('concurrent sessions', () => {
  test('1,000 sessions run concurrently, one agent each, and every log is complete, isolated and invariant-clean', async () => {
    let running = 0;
    let maxRunning = 0;
    // One tool instance shared by every agent: sessions must not leak into each other through it.
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes a number',
      parameters: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        // A macrotask: runs yield one per turn, so overlapping tools prove the sessions interleave.
        await new Promise<void>((resolve) => setImmediate(resolve));
        running--;
        return `echo ${n}`;
      },
    });

    const sessions = Array.from({ length: SESSIONS }, (_, i) => {
      const model = scriptedModel([
        { toolCalls: [{ id: `call_${i}`, name: 'echo', arguments: { n: i } }], usage: { input: 10, output: 2 } },
        { text: `answer ${i}`, usage: { input: 20, output: 3 } },
      ]);
      const agent = createAgent({ model, tools: [echo], retry: { jitter: false } });
      const feed: AgentEvent[] = [];
      agent.events.subscribe((event) => feed.push(event));
      return { i, model, agent, feed, run: agent.prompt(`session ${i}`) };
    });
    // Every session is under way before any of them finishes.
    expect(sessions.filter((s) => s.agent.running).length).toBe(SESSIONS);

    const logs = await Promise.all(sessions.map((s) => finished(s.run)));

    expect(new Set(logs.map((log) => log.events[0]?.runId)).size).toBe(SESSIONS);
    expect(maxRunning).toBeGreaterThan(1);
    sessions.forEach((session, index) => {
      const { result, events } = logs[index] as (typeof logs)[number];
      const { i, model, agent, feed } = session;
      expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, ...TEXT_TURN, 'agentEnd']);
      expectInvariants(events, result.messages);
      // Isolated: one runId, seq from 0, and the agent's feed carried exactly this run.
      expect(new Set(events.map((e) => e.runId)).size).toBe(1);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, n) => n));
      expect(feed).toEqual(events);
      const call = called([{ id: `call_${i}`, name: 'echo', arguments: { n: i } }], {
        usage: { input: 10, output: 2 },
      });
      const echoed = toolResult(`call_${i}`, 'echo', `echo ${i}`);
      expect(ofType(events, 'toolExecutionStart')).toMatchObject([
        { turnIndex: 0, toolCallId: `call_${i}`, arguments: { n: i } },
      ]);
      expect(turnEnds(events)).toEqual([
        [0, 'toolsExecuted'],
        [1, 'complete'],
      ]);
      expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
      expect(result.messages).toEqual([
        user(`session ${i}`),
        call,
        echoed,
        said(`answer ${i}`, { input: 20, output: 3 }),
      ]);
      expect(model.requests.map((r) => r.messages)).toEqual([
        [user(`session ${i}`)],
        [user(`session ${i}`), call, echoed],
      ]);
      expectCounters(result.counters, {
        turns: 2,
        modelCalls: 2,
        toolCallsRequested: 1,
        toolCallsExecuted: 1,
        tokensIn: 30,
        tokensOut: 5,
      });
      expect(agent.running).toBe(false);
    });
  });
});
