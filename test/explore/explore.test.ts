import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, INTERRUPTED_BY_RESTART, type AgentOptions, type PreDispatchPolicy } from 'agentchart';
import { parseTrace } from 'agentchart/trace';
import { assertAgent, exploreAgent, writeTrace, type ExploreOptions, type Step } from 'agentchart/testing';
import { reportStats } from '../support/stats.js';
import {
  anyModel,
  DEPLOY_REPLIES,
  deploy,
  deployAgent,
  deploysRunAsApproved,
  pinToProd,
  policiesNeverRefused,
  readLogs,
  reinjectDeclined,
} from './fixtures.js';

/** exploreAgent itself: what it explores, what it reports, how a path replays, and what it refuses. */

const EVERY_INTERRUPTION = [
  'approve',
  'deny',
  'steer',
  'followUp',
  'abort',
  'toolError',
  'modelError',
  'crash',
] as const;

/** Collects, through the property, what happened on the explored paths. */
function collector() {
  const kinds = new Set<string>();
  const results = new Set<string>();
  return {
    kinds,
    results,
    property: (
      _log: unknown,
      messages: readonly { role: string; content?: unknown }[],
      { steps }: { steps: readonly Step[] },
    ) => {
      for (const step of steps) kinds.add(step.kind === 'tool' ? `tool ${step.outcome}` : step.kind);
      for (const m of messages) if (m.role === 'toolResult') results.add(String(m.content));
    },
  };
}

describe('exploreAgent', () => {
  it('a correct configuration explores its bound clean, with every interruption landing somewhere', async () => {
    const seen = collector();
    const result = await exploreAgent(deployAgent, {
      replies: DEPLOY_REPLIES,
      interruptions: EVERY_INTERRUPTION,
      property: seen.property,
    });
    reportStats(
      `explore [deploy agent, every interruption, 3 turns, 1 per path]: ${result.paths} paths, ${result.states} states, ` +
        `${result.pruned} pruned, longest ${result.longest} steps, ${result.elapsedMs} ms (${result.pathsPerSecond} paths/s)`,
    );
    expect([result.violating, result.complete]).toEqual([0, true]);
    expect(result.paths).toBeGreaterThan(500);
    expect(result.states).toBeGreaterThan(300);
    expect([...seen.kinds].sort()).toEqual([
      'abort',
      'approval',
      'clock',
      'crash',
      'followUp',
      'modelError',
      'reply',
      'steer',
      'tool error',
      'tool ok',
    ]);
    // A crash while deploy ran: its replay rule ('never') gives the restart result instead of a second run.
    expect(seen.results).toContain(INTERRUPTED_BY_RESTART);
    expect(seen.results).toContain('rejected: denied');
    expect(seen.results).toContain('deploy failed (injected toolError)');
  }, 120_000);

  it('violations come simplest first, and each replays to the same log from its path', async () => {
    const options: ExploreOptions = {
      replies: DEPLOY_REPLIES,
      interruptions: ['approve', 'deny'],
      property: policiesNeverRefused,
    };
    const result = await exploreAgent(deployAgent({ postTurn: [reinjectDeclined] }), options);
    const lengths = result.violations.map((v) => v.path.length);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
    expect(result.violations.length).toBe(10);
    expect(result.violating).toBeGreaterThan(10);
    const last = result.violations.at(-1)!;
    const replayed = await exploreAgent(deployAgent({ postTurn: [reinjectDeclined] }), {
      ...options,
      path: last.replay,
    });
    expect(replayed.paths).toBe(1);
    expect(replayed.violations[0]!.replay).toBe(last.replay);
    const strip = (log: typeof last.log) => log.map(({ runId: _runId, ...rest }) => rest);
    expect(strip(replayed.violations[0]!.log)).toEqual(strip(last.log));
  });

  it('a counterexample that shows the harm comes before a shorter one that only adds an abort after it', async () => {
    // The staging approval is pinned back to prod: the harm is done when the tool starts. The shortest complete
    // path then aborts (3 steps); the one that lets the run end as the model decides (4 steps) shows the property's
    // subject, and comes first.
    const options: ExploreOptions = {
      replies: DEPLOY_REPLIES,
      interruptions: ['approve', 'deny', 'abort'],
      approvals: { staging: { approved: true, arguments: { env: 'staging' } } },
      property: deploysRunAsApproved,
    };
    const result = await exploreAgent(deployAgent({ preDispatch: [pinToProd] }), options);
    const interruptions = (steps: readonly Step[]) =>
      steps.filter((step) => ['steer', 'followUp', 'abort', 'crash', 'modelError'].includes(step.kind)).length;
    const order = result.violations.map((v) => [interruptions(v.path), v.path.length]);
    expect(order).toEqual([...order].sort(([a = 0, b = 0], [c = 0, d = 0]) => a - c || b - d));
    expect(result.violations[0]!.path.map((step) => step.label)).toEqual([
      'reply deploy',
      'staging call_0_0',
      'ok call_0_0',
      'reply done',
    ]);
    // The shorter one is still found and counted: it replays to a violation in 3 steps.
    const aborted = await exploreAgent(deployAgent({ preDispatch: [pinToProd] }), {
      ...options,
      path: 'reply deploy → staging call_0_0 → abort',
    });
    expect(aborted.violations[0]?.path.map((step) => step.kind)).toEqual(['reply', 'approval', 'abort']);
    await expect(assertAgent(deployAgent({ preDispatch: [pinToProd] }), options)).rejects.toThrow(
      /The simplest counterexample \(fewest interruptions, then fewest steps\), 4 steps:\n.*\npath:\n  1\. model call 0 answers "deploy"/,
    );
  });

  it('a path that does not replay names the step and the moves there', async () => {
    await expect(
      exploreAgent(deployAgent, {
        replies: DEPLOY_REPLIES,
        interruptions: ['approve'],
        path: 'reply deploy → deny call_0_0',
      }),
    ).rejects.toThrow(
      'exploreAgent: the path does not replay: step 2 is "deny call_0_0", but the moves here are "approve call_0_0".',
    );
  });

  it('lands interruptions inside event subscribers when asked (re-entrant), and they are pruned where they change nothing', async () => {
    const labels = new Set<string>();
    const result = await exploreAgent(deployAgent, {
      replies: DEPLOY_REPLIES,
      interruptions: ['approve', 'deny', 'steer', 'abort'],
      maxTurns: 2,
      reentrant: true,
      property: (_log, _messages, { steps }) =>
        void steps.forEach((step) => step.label.includes(' at ') && labels.add(step.label.replace(/ #\d+$/, ''))),
    });
    reportStats(
      `explore [deploy agent, re-entrant, 2 turns]: ${result.paths} paths, ${result.states} states, ${result.pruned} pruned`,
    );
    expect([result.violating, result.complete]).toEqual([0, true]);
    expect(result.pruned).toBeGreaterThan(0);
    expect(labels).toContain('abort at toolApprovalRequested');
    expect(labels).toContain('abort at toolExecutionStart');
    expect(labels).toContain('steer at toolApprovalResolved');
  });

  it("toolOrder 'any' finishes parallel calls in every order; 'callOrder' in call order only", async () => {
    const replies = {
      both: {
        toolCalls: [
          { name: 'read_logs', arguments: {} },
          { name: 'read_logs', arguments: {} },
        ],
      },
      done: { text: 'ok' },
    };
    const orders = async (toolOrder: 'any' | 'callOrder') => {
      const seen = new Set<string>();
      await exploreAgent(deployAgent, {
        replies,
        maxTurns: 1,
        toolOrder,
        property: (log) =>
          void seen.add(log.flatMap((e) => (e.type === 'toolExecutionEnd' ? [e.toolCallId] : [])).join(',')),
      });
      return [...seen].sort();
    };
    expect(await orders('any')).toEqual(['', 'call_0_0,call_0_1', 'call_0_1,call_0_0']);
    expect(await orders('callOrder')).toEqual(['', 'call_0_0,call_0_1']);
  });

  it("toolBodies 'real' runs the tools' own bodies; the default stubs them", async () => {
    const results = async (toolBodies: 'real' | 'stub') => {
      const seen = new Set<string>();
      await exploreAgent(deployAgent, {
        replies: DEPLOY_REPLIES,
        interruptions: ['approve'],
        maxTurns: 2,
        toolBodies,
        property: (_log, messages) => void messages.forEach((m) => m.role === 'toolResult' && seen.add(m.content)),
      });
      return [...seen].sort();
    };
    expect(await results('real')).toEqual(['all quiet', 'deployed to prod']);
    expect(await results('stub')).toEqual(['deploy ok', 'read_logs ok']);
  });

  it('real bodies that work across macrotasks are waited for, not taken for a hang', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Takes a few macrotasks.',
      parameters: z.object({}),
      async execute() {
        for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
        return 'slow done';
      },
    });
    const result = await exploreAgent(
      { model: anyModel(), tools: [slow] },
      { replies: { slow: { toolCalls: [{ name: 'slow' }] }, done: { text: 'ok' } }, maxTurns: 2, toolBodies: 'real' },
    );
    expect([result.violating, result.paths]).toEqual([0, 3]);
  });

  it('a property that returns false, a message, or throws is a violation with that message', async () => {
    const first = async (property: ExploreOptions['property']) =>
      (await exploreAgent(deployAgent, { replies: { done: { text: 'ok' } }, property })).violations[0]?.problems;
    expect(await first(() => false)).toEqual(['property: violated']);
    expect(await first(() => 'no good')).toEqual(['property: no good']);
    expect(
      await first(() => {
        throw new Error('expected 1 to be 2');
      }),
    ).toEqual(['property: expected 1 to be 2']);
    expect(await first(() => true)).toBeUndefined();
  });

  it('a run that waits on nothing the explorer controls is reported as a hang', async () => {
    const neverAnswers: AgentOptions = { model: anyModel(), tools: [deploy], approval: () => new Promise(() => {}) };
    const result = await exploreAgent(neverAnswers, { replies: DEPLOY_REPLIES, maxTurns: 1 });
    expect(result.violations[0]?.problems).toEqual([
      'hang: the run neither ended nor waits on the model, a tool, an approval or a timer',
    ]);
    expect(result.violations[0]?.replay).toBe('reply deploy');
  });

  it('an agent that is not deterministic between paths is refused with the moves that differed', async () => {
    let calls = 0;
    // State kept across paths: every other deploy is skipped, so a replayed prefix meets other moves.
    const flaky: PreDispatchPolicy = ({ toolCall }) =>
      toolCall.name === 'deploy' && calls++ % 2 === 1 ? { verdict: 'skip', reason: 'flaky' } : { verdict: 'continue' };
    const options: AgentOptions = { model: anyModel(), tools: [deploy, readLogs], policies: { preDispatch: [flaky] } };
    await expect(
      exploreAgent(options, { replies: DEPLOY_REPLIES, interruptions: ['approve', 'deny'] }),
    ).rejects.toThrow(/the agent is not deterministic/);
    // Fresh options per path keep it deterministic.
    calls = 0;
    const fresh = () => {
      let own = 0;
      const policy: PreDispatchPolicy = ({ toolCall }) =>
        toolCall.name === 'deploy' && own++ % 2 === 1 ? { verdict: 'skip', reason: 'flaky' } : { verdict: 'continue' };
      return { ...options, policies: { preDispatch: [policy] } };
    };
    expect((await exploreAgent(fresh, { replies: DEPLOY_REPLIES, interruptions: ['approve', 'deny'] })).violating).toBe(
      0,
    );
  });

  it('maxPaths stops the exploration: complete is false and assertAgent says so', async () => {
    const options: ExploreOptions = { replies: DEPLOY_REPLIES, interruptions: ['approve', 'deny'], maxPaths: 5 };
    const result = await exploreAgent(deployAgent, options);
    expect([result.paths, result.complete]).toEqual([5, false]);
    await expect(assertAgent(deployAgent, options)).rejects.toThrow(
      /stopped at maxPaths \(5 paths, \d+ states\) before its bound was exhausted/,
    );
  });

  it('refuses options it cannot explore', async () => {
    await expect(exploreAgent(deployAgent, { replies: {} })).rejects.toMatchObject({
      code: 'InvalidOptions',
      message: 'exploreAgent: replies must hold at least one reply.',
    });
    await expect(
      exploreAgent(deployAgent, { replies: DEPLOY_REPLIES, interruptions: ['stear' as 'steer'] }),
    ).rejects.toMatchObject({
      code: 'InvalidOptions',
      message: expect.stringContaining('unknown interruption "stear"'),
    });
    await expect(exploreAgent(deployAgent, { replies: DEPLOY_REPLIES, maxTurns: 0 })).rejects.toMatchObject({
      message: 'exploreAgent: maxTurns must be an integer ≥ 1.',
    });
  });
});

describe('writeTrace', () => {
  it('writes a counterexample as a trace the viewer opens: its agent events are the violation log, with the machines stepping', async () => {
    const result = await exploreAgent(deployAgent({ postTurn: [reinjectDeclined] }), {
      replies: DEPLOY_REPLIES,
      interruptions: ['approve', 'deny'],
      property: policiesNeverRefused,
    });
    const violation = result.violations[0]!;
    const dir = mkdtempSync(join(tmpdir(), 'agentchart-trace-'));
    const written = await writeTrace(violation, join(dir, 'counterexample.jsonl'));
    const trace = parseTrace(readFileSync(written.path, 'utf8'));
    expect(trace.entries.length).toBe(written.entries);
    const agentEvents = trace.entries.flatMap((entry) => (entry.kind === 'agent' ? [entry.event] : []));
    expect(agentEvents.map((e) => `${e.type}:${e.seq}`)).toEqual(violation.log.map((e) => `${e.type}:${e.seq}`));
    const machines = new Set(trace.entries.flatMap((entry) => (entry.kind === 'machine' ? [entry.machineId] : [])));
    expect([...machines]).toEqual(expect.arrayContaining(['master', 'turn']));
    expect(trace.entries.some((entry) => entry.kind === 'transition')).toBe(true);
    const html = readFileSync((await writeTrace(violation, join(dir, 'counterexample.html'))).path, 'utf8');
    expect(html).toContain(
      '<title>counterexample: property: postTurn policy refused: policy returned an invalid verdict',
    );
    expect(html).toContain('"kind":"agent"');
  });

  it('refuses a violation that did not come from exploreAgent', async () => {
    await expect(
      writeTrace({ path: [], replay: '', log: [], messages: [], message: '', problems: [] }, join(tmpdir(), 'x.jsonl')),
    ).rejects.toMatchObject({
      code: 'InvalidInput',
    });
  });
});
