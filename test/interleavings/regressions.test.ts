import { describe, expect, it } from 'vitest';
import { describeReport, runScenario } from './scenario.js';
import { scriptedScheduler } from './scripted-scheduler.js';
import { afterSteps, run, scenarioOf, type Scenario } from './spec.js';

/** Minimal interleavings that once broke an invariant, kept as regression tests. */

async function checked(scenario: Scenario, order: string[] = []) {
  const scheduler = scriptedScheduler(order);
  const report = await runScenario(scenario, scheduler);
  expect(report.violations, describeReport(report, scheduler)).toEqual([]);
  return report;
}

describe('interleaving regressions', () => {
  it('maxTurns 1 with a follow-up sent during the only turn: the follow-up stays queued, its receipt says so', async () => {
    const report = await checked(scenarioOf({ config: { maxTurns: 1 }, actions: [afterSteps({ kind: 'followUp' })] }));
    expect(report.results.map((r) => r && `${r.status}/${r.endReason}`)).toEqual(['failed/maxTurns']);
    expect(report.checked.sent.map((m) => m.receipt)).toEqual([{ status: 'stillQueued' }]);
    expect(report.checked.agent.snapshot().followUpQueue).toEqual([{ role: 'user', content: 'followUp 0' }]);
  });

  it('a reply cut by a rate limit (no retry left) after a complete tool call: the call gets a result', async () => {
    const replies = [
      { text: false, calls: [run('work')], end: { kind: 'error' as const, error: 'rateLimit' as const } },
    ];
    const report = await checked(scenarioOf({ replies }));
    expect(report.results.map((r) => r && `${r.status}/${r.endReason}`)).toEqual(['failed/retryExhausted']);
    const results = report.checked.agent.messages.filter((m) => m.role === 'toolResult');
    expect(results.map((m) => m.role === 'toolResult' && [m.toolCallId, m.isError])).toEqual([['c0_0', true]]);
  });
});
