import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type AgentOptions } from 'agentchart';
import { exploreAgent, scriptedModel, type ExploreOptions, type ExploreResult } from 'agentchart/testing';
import { reportStats } from '../support/stats.js';

/**
 * Model checking of the whole agent through its public API, with the checker users get
 * (agentchart/testing's exploreAgent): every reply of an alphabet at every model call, approval
 * answers, and each interruption landed wherever the run waits on the world, on the configurations
 * the runtime has — execution strategies, steering that waits, report mode, retries and fallback,
 * policies in every slot. The machine-level checks beside this file walk each machine alone.
 */

const tool = (name: string, extra: { requiresApproval?: boolean; progress?: boolean; replay?: 'safe' } = {}) =>
  defineTool({
    name,
    description: `The ${name} tool.`,
    parameters: z.object({ n: z.number().optional() }),
    ...extra,
    execute: () => `${name} done`,
  });

const read = tool('read');
const write = tool('write', { requiresApproval: true });
const note = tool('note', { progress: true });
const report = tool('report');
const model = scriptedModel([], { name: 'primary' });

const REPLIES = {
  read: { toolCalls: [{ name: 'read', arguments: {} }] },
  readAndWrite: {
    toolCalls: [
      { name: 'read', arguments: {} },
      { name: 'write', arguments: { n: 1 } },
    ],
  },
  text: { text: 'Done.' },
};
const EVERYTHING = ['approve', 'deny', 'steer', 'followUp', 'abort', 'toolError', 'modelError'] as const;

const CASES: Array<{ name: string; agent: AgentOptions; options: ExploreOptions }> = [
  {
    name: 'parallel tools, an approval, every interruption but crash',
    agent: { model, tools: [read, write] },
    options: { replies: REPLIES, interruptions: EVERYTHING, maxTurns: 2 },
  },
  {
    name: 'crashes on a store: a tool re-run (safe) or not (never), steering, abort, errors',
    agent: { model, tools: [read, tool('write', { replay: 'safe' })] },
    options: { replies: REPLIES, interruptions: ['crash', 'steer', 'abort', 'toolError'] },
  },
  {
    name: 'sequential tools, steering waits for the batch, 2 interruptions',
    agent: { model, tools: [read, write], toolExecution: 'sequential', steeringInterrupts: false },
    options: {
      replies: REPLIES,
      interruptions: ['approve', 'deny', 'steer', 'followUp', 'abort'],
      maxTurns: 2,
      maxInterruptions: 2,
    },
  },
  {
    name: 'every order of completion, { concurrency: 2 }, steering grace on the clock',
    agent: { model, tools: [read, write], toolExecution: { concurrency: 2 }, steeringGraceMs: 100 },
    options: {
      replies: { ...REPLIES, three: { toolCalls: [{ name: 'read' }, { name: 'read' }, { name: 'read' }] } },
      interruptions: ['approve', 'steer', 'abort'],
      maxTurns: 2,
      toolOrder: 'any',
    },
  },
  {
    name: 'report mode with a progress tool, errors',
    agent: {
      model,
      tools: [read, note, report],
      finalReport: { toolName: 'report' },
      retry: { maxAttempts: 2, baseDelayMs: 50 },
    },
    options: {
      replies: {
        read: REPLIES.read,
        note: { toolCalls: [{ name: 'note' }] },
        report: { toolCalls: [{ name: 'report', arguments: { n: 1 } }] },
        text: REPLIES.text,
      },
      interruptions: ['steer', 'abort', 'toolError', 'modelError'],
    },
  },
  {
    name: 'retries and a fallback model: a rate limit in the alphabet, backoff on the clock',
    agent: {
      model,
      fallbackModels: [scriptedModel([], { name: 'fallback' })],
      tools: [read],
      retry: { maxAttempts: 2, baseDelayMs: 100 },
    },
    options: {
      replies: { read: REPLIES.read, limited: { error: { kind: 'rateLimit', retryAfterMs: 200 } }, text: REPLIES.text },
      interruptions: ['steer', 'abort', 'crash'],
      maxTurns: 2,
    },
  },
  {
    name: 'policies in every slot',
    agent: {
      model,
      tools: [read, write],
      policies: {
        preTurn: [
          ({ turnIndex }) =>
            turnIndex === 1 ? { verdict: 'inject', messages: ['Keep it short.'] } : { verdict: 'continue' },
        ],
        preDispatch: [
          ({ toolCall }) =>
            toolCall.name === 'write' ? { verdict: 'continue', arguments: { n: 2 } } : { verdict: 'continue' },
        ],
        postTurn: [
          ({ toolResults }) =>
            toolResults.some((r) => r.isError) ? { verdict: 'stop', reason: 'a tool failed' } : { verdict: 'continue' },
        ],
        postLoop: [
          ({ turnIndex }) =>
            turnIndex < 2 ? { verdict: 'inject', messages: ['One more thing.'] } : { verdict: 'continue' },
        ],
      },
    },
    options: { replies: REPLIES, interruptions: ['approve', 'deny', 'steer', 'followUp', 'abort', 'toolError'] },
  },
];

const stats = (name: string, r: ExploreResult) =>
  reportStats(
    `agent [${name}]: ${r.paths} paths, ${r.states} states, ${r.pruned} pruned, longest ${r.longest} steps, ${r.elapsedMs} ms (${r.pathsPerSecond} paths/s)`,
  );

describe('model checking: the agent through its public API', () => {
  it.each(CASES)(
    '$name: every path keeps the invariants',
    async ({ name, agent, options }) => {
      const result = await exploreAgent(agent, options);
      stats(name, result);
      expect(result.violations.map((v) => `${v.message}\n    replay: ${v.replay}`)).toEqual([]);
      expect(result.complete).toBe(true);
      expect(result.paths).toBeGreaterThan(50);
    },
    120_000,
  );

  // The re-entrant races the interleavings found (V3a, V3b, V4a–c, V6a, V6b, V8: all fixed) were
  // single points; here abort, steer and follow-up land in the subscriber of every event instead.
  it('abort, steer and follow-up from inside every event subscriber: approvals, policies, the last turn (V3a, V4a–c, V6a, V6b, V8)', async () => {
    const agent: AgentOptions = {
      model,
      tools: [read, write],
      policies: { preDispatch: [() => ({ verdict: 'continue' })], postLoop: [() => ({ verdict: 'continue' })] },
    };
    const replies = {
      ...REPLIES,
      twoWrites: {
        toolCalls: [
          { name: 'write', arguments: { n: 1 } },
          { name: 'write', arguments: { n: 2 } },
        ],
      },
    };
    const result = await exploreAgent(agent, {
      replies,
      interruptions: ['approve', 'deny', 'steer', 'followUp', 'abort'],
      maxTurns: 1,
      reentrant: true,
    });
    stats('re-entrant, approvals and policies', result);
    expect(result.violations.map((v) => `${v.message}\n    replay: ${v.replay}`)).toEqual([]);
    expect(result.complete).toBe(true);
  }, 120_000);

  it('an abort from the retry subscriber, then a steer from the turnEnd it publishes (V3b), and every other pair', async () => {
    const agent: AgentOptions = { model, tools: [read], retry: { maxAttempts: 2, baseDelayMs: 100 } };
    const replies = { limited: { error: { kind: 'rateLimit' as const } }, text: REPLIES.text };
    const result = await exploreAgent(agent, {
      replies,
      interruptions: ['steer', 'abort'],
      maxTurns: 1,
      maxInterruptions: 2,
      reentrant: true,
    });
    stats('re-entrant pairs around a backoff', result);
    expect(result.violations.map((v) => `${v.message}\n    replay: ${v.replay}`)).toEqual([]);
    const v3b = await exploreAgent(agent, {
      replies,
      interruptions: ['steer', 'abort'],
      maxInterruptions: 2,
      reentrant: true,
      path: 'reply limited → abort at retry #1 → steer at turnEnd #1',
    });
    expect([v3b.paths, v3b.violating]).toEqual([1, 0]);
  }, 120_000);

  // Found by this checker (fixed): a denial answered before a crash was not in the checkpoint, so the
  // resumed session asked again — a second toolApprovalResolved with no request, the rejection counted
  // twice, and a second answer "approve" ran the call the human denied.
  it('crash after an approval was answered: the answer holds after the restart', async () => {
    const result = await exploreAgent(
      { model, tools: [read, write] },
      { replies: REPLIES, interruptions: ['approve', 'deny', 'crash'], maxTurns: 1 },
    );
    expect(result.violations[0]?.replay).toBe(undefined);
  });
});
