import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type AgentOptions } from 'agentchart';
import { AgentCheckError, raceAgent, ranOnlyAsApproved, scriptedModel } from 'agentchart/testing';
import { reportStats } from '../support/stats.js';
import { DEPLOY_REPLIES, deployAgent, pinToProd, policiesNeverRefused, reinjectDeclined } from './fixtures.js';

/** raceAgent: the same interruptions raced by fast-check's scheduler, with the tools' real bodies. */

const INTERRUPTIONS = ['approve', 'deny', 'steer', 'followUp', 'abort', 'toolError', 'crash'] as const;

async function failureOf(run: Promise<unknown>): Promise<AgentCheckError> {
  const error = await run.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AgentCheckError);
  return error as AgentCheckError;
}

describe('raceAgent', () => {
  it('runs the real tool bodies in every order the scheduler picks, clean for a correct agent', async () => {
    const ran: string[] = [];
    const journaled = defineTool({
      name: 'deploy',
      description: 'Deploys the app.',
      parameters: z.object({ env: z.enum(['staging', 'prod']) }),
      requiresApproval: true,
      replay: 'safe',
      async execute({ env }) {
        ran.push(env);
        await new Promise((resolve) => setImmediate(resolve)); // a body that yields, as real I/O does
        return `deployed to ${env}`;
      },
    });
    const agent: AgentOptions = { model: scriptedModel([]), tools: [journaled] };
    const result = await raceAgent(agent, {
      replies: DEPLOY_REPLIES,
      interruptions: INTERRUPTIONS,
      maxInterruptions: 2,
      runs: 150,
      property: ranOnlyAsApproved('deploy'),
    });
    reportStats(
      `race [deploy agent, real bodies, 2 interruptions]: ${result.runs} runs (seed ${result.seed}), ${ran.length} deploys ran`,
    );
    expect(result.runs).toBe(150);
    expect(ran.length).toBeGreaterThan(20);
  });

  it('finds a planted bug and throws it with the seed and path that replay it', async () => {
    const options = {
      replies: DEPLOY_REPLIES,
      interruptions: ['approve', 'deny'] as const,
      runs: 200,
      property: policiesNeverRefused,
    };
    const failure = await failureOf(raceAgent(deployAgent({ postTurn: [reinjectDeclined] }), options));
    expect(failure.message).toMatch(
      /^raceAgent: a run breaks the invariants or the property \(run \d+ of 200, shrunk \d+ times\)\. Replay it with \{ seed: -?\d+, path: '[\d:]+' \}:/,
    );
    expect(failure.violation?.problems[0]).toMatch(
      /^property: postTurn policy refused: .*tool call call_\d_0_again of message 0 has no result/,
    );
    const again = await failureOf(
      raceAgent(deployAgent({ postTurn: [reinjectDeclined] }), {
        ...options,
        seed: failure.seed!,
        path: failure.path!,
      }),
    );
    expect(again.violation?.replay).toBe(failure.violation?.replay);
  });

  it('finds the pre-dispatch rewrite after an approval with real bodies', async () => {
    const failure = await failureOf(
      raceAgent(deployAgent({ preDispatch: [pinToProd] }), {
        replies: DEPLOY_REPLIES,
        interruptions: ['approve', 'deny', 'steer', 'abort'],
        approvals: { staging: { approved: true, arguments: { env: 'staging' } } },
        property: ranOnlyAsApproved('deploy'),
        runs: 300,
      }),
    );
    expect(failure.violation?.problems).toContainEqual(
      expect.stringMatching(
        /^property: deploy \(call_\d_0\) ran with \{"env":"prod"\}, approved: \{"env":"staging"\}$/,
      ),
    );
  });
});
