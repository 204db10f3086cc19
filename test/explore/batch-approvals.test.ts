import { describe, expect, it } from 'vitest';
import type { AgentEvent, AgentOptions } from 'agentchart';
import { exploreAgent, type Interruption, type Step } from 'agentchart/testing';
import { reportStats } from '../support/stats.js';
import { anyModel, deploy, readLogs } from './fixtures.js';

/**
 * exploreAgent on a batch of three calls that need approval (and one that does not): every order of
 * decisions, denials among them, an abort (or a crash, with the durable approvals of a stored session)
 * before, between and after them. No invariant may break, and the batch never starts before its last
 * decision.
 */

const agent: AgentOptions = { model: anyModel(), tools: [deploy, readLogs] };
const REPLIES = {
  batch: {
    toolCalls: [
      { name: 'deploy', arguments: { env: 'staging' } },
      { name: 'read_logs', arguments: {} },
      { name: 'deploy', arguments: { env: 'prod' } },
      { name: 'deploy', arguments: { env: 'staging' } },
    ],
  },
};
/** The positions of the deploy calls in the reply (the explorer names calls `call_<model call>_<position>`). */
const DEPLOYS = ['0', '2', '3'];
const position = (toolCallId: string) => toolCallId.split('_').at(-1) ?? '';

/** Collects the decision orders and where the interruptions landed; the property itself: nothing starts early. */
function observer() {
  const orders = new Set<string>();
  const interruptedAfter = new Set<string>();
  const property = (log: readonly AgentEvent[], _messages: unknown, { steps }: { steps: readonly Step[] }) => {
    const decided = steps.flatMap((step) => (step.kind === 'approval' ? [position(step.toolCallId)] : []));
    if (decided.length === 3) orders.add(decided.join(' '));
    for (const step of steps)
      if (step.kind === 'abort' || step.kind === 'crash') {
        const before = steps.slice(0, steps.indexOf(step)).filter((s) => s.kind === 'approval').length;
        interruptedAfter.add(`${step.kind} after ${before}`);
      }
    const requested = log.filter((event) => event.type === 'toolApprovalRequested');
    const lastDecision = log.reduce((last, event, index) => (event.type === 'toolApprovalResolved' ? index : last), -1);
    const firstStart = log.findIndex((event) => event.type === 'toolExecutionStart');
    if (requested.length > 0 && firstStart >= 0 && firstStart < lastDecision)
      return 'a call of the batch started before its last approval was decided';
    const asked = requested.map((event) => (event.type === 'toolApprovalRequested' ? position(event.toolCallId) : ''));
    if (asked.length > 0 && asked.join(' ') !== DEPLOYS.slice(0, asked.length).join(' '))
      return `requests out of call order: ${asked.join(' ')}`;
  };
  return { orders, interruptedAfter, property };
}

const ALL_ORDERS = [
  [0, 1, 2],
  [0, 2, 1],
  [1, 0, 2],
  [1, 2, 0],
  [2, 0, 1],
  [2, 1, 0],
].map((order) => order.map((index) => DEPLOYS[index]).join(' '));

describe('exploreAgent: a batch of three approvals', () => {
  it.each([
    ['the approval handler', ['approve', 'deny', 'abort']],
    ['durable approvals (resolveApproval), with crashes', ['approve', 'deny', 'abort', 'crash']],
  ] as Array<[string, Interruption[]]>)(
    '%s: every decision order, an interruption before, between and after the decisions; no invariant broken',
    async (name, interruptions) => {
      const seen = observer();
      const result = await exploreAgent(agent, {
        replies: REPLIES,
        interruptions,
        maxTurns: 1,
        property: seen.property,
      });
      reportStats(
        `explore [a batch of three approvals, ${name}]: ${result.paths} paths, ${result.states} states, ` +
          `${result.pruned} pruned, ${result.elapsedMs} ms`,
      );
      expect(result.violations.map((v) => `${v.message}\n    replay: ${v.replay}`)).toEqual([]);
      expect(result.complete).toBe(true);
      expect([...seen.orders].sort()).toEqual(ALL_ORDERS);
      const landed = [...seen.interruptedAfter];
      for (const after of [0, 1, 2, 3]) expect(landed).toContain(`abort after ${after}`);
      // A crash between two decisions reloads a state an earlier path reached (the store kept the same log):
      // its paths are pruned there, so only some of its placements end a path of their own.
      if (interruptions.includes('crash'))
        expect(landed.filter((where) => /^crash after [12]$/.test(where)).length).toBeGreaterThan(0);
    },
    120_000,
  );
});
