import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type RunResult, type SessionStore } from 'agentchart';
import { scriptedModel, type ScriptEntry } from 'agentchart/testing';
import { expectInvariants } from '../support/harness.js';
import { diesAfter } from './dying-store.js';

// Report mode judges a turn that did no work when the turn ends: the reply is discarded, a guidance
// message queued, the turn retried. A process that dies anywhere around such a turn must resume into
// the same judgment: never between a reply and its judgment, where the run could only end (the
// judgment needs the turn's outcome, which a checkpoint between turns no longer holds).

const reportTool = defineTool({
  name: 'report',
  description: 'Files the final report.',
  parameters: z.object({ summary: z.string() }),
  // Filing the same report again is harmless: a call the restart cut runs again (the default is never to).
  replay: 'safe',
  execute: () => 'filed',
});
const REPORT_CALL: ScriptEntry = {
  toolCalls: [{ id: 'r1', name: 'report', arguments: { summary: 'done' } }],
  delayMs: 1,
};
const TALK: ScriptEntry = { text: 'Let me just talk.', delayMs: 1 };

const agentOn = (script: ScriptEntry[], store?: SessionStore) =>
  createAgent({
    model: scriptedModel(script),
    tools: [reportTool],
    finalReport: { toolName: 'report' },
    ...(store ? { store, sessionId: 's' } : {}),
  });

describe('report mode: a restart after any step around a turn that did no work', () => {
  it('resumes into the same judgment: same history, counters and report as a run never cut, nothing doubled', async () => {
    const uninterrupted = await agentOn([TALK, REPORT_CALL]).prompt('Report').result;
    expect(uninterrupted).toMatchObject({ status: 'completed', endReason: 'finalReport' });
    expect(uninterrupted.counters).toMatchObject({ turnsFailed: 1, retries: 1 });

    const whole = { steps: 0 };
    const full = agentOn(
      [TALK, REPORT_CALL],
      diesAfter(memoryStore(), () => (whole.steps++, false)),
    );
    await full.ready;
    await full.prompt('Report').result;
    await full.close();
    expect(whole.steps).toBeGreaterThan(2);

    const stepsWithJudgment: string[][] = [];
    for (let cut = 1; cut < whole.steps; cut++) {
      const store = memoryStore();
      const first = agentOn(
        [TALK, REPORT_CALL],
        diesAfter(store, (_, index) => index + 1 === cut),
      );
      await first.ready;
      await first.prompt('Report').result;
      await first.close();
      const kept = await store.loadEvents('s');
      const where = `cut after step ${cut} of ${whole.steps} (kept: ${kept.map((event) => event.type).join(' ')})`;
      expect(
        kept.some((event) => event.type === 'agentEnd'),
        where,
      ).toBe(false);
      // A kept turnEnd of the turn without work always comes with its judgment (the retry) in the same step.
      const judged = kept.some((event) => event.type === 'retry');
      expect(
        kept.some((event) => event.type === 'turnEnd' && event.turnIndex === 0),
        where,
      ).toBe(judged);
      if (judged) stepsWithJudgment.push(kept.map((event) => event.type));

      // The second process's model answers what is left to ask: the talk again if that turn was cut, then the report.
      const second = agentOn(judged ? [REPORT_CALL] : [TALK, REPORT_CALL], store);
      const { resumedRun } = await second.ready;
      expect(resumedRun, where).not.toBeNull();
      const resumed: RunResult = await resumedRun!.result;
      const events = await store.loadEvents('s');
      expect(resumed, where).toMatchObject({ status: 'completed', endReason: 'finalReport' });
      expect(resumed.messages, where).toEqual(uninterrupted.messages);
      // A model call the restart cut is made again: counted once more, never more.
      const cutCalls = kept.reduce(
        (open, event) => (event.type === 'beforeModelCall' ? 1 : event.type === 'messageEnd' ? 0 : open),
        0,
      );
      expect(resumed.counters, where).toEqual({
        ...uninterrupted.counters,
        modelCalls: uninterrupted.counters.modelCalls + cutCalls,
      });
      expect(
        events.filter((event) => event.type === 'retry'),
        where,
      ).toHaveLength(1);
      expect(
        events.filter((event) => event.type === 'agentEnd'),
        where,
      ).toHaveLength(1);
      expect(new Set(events.map((event) => event.runId)).size, where).toBe(1);
      expectInvariants(events, resumed.messages);
      await second.close();
    }
    // Some cut fell after the judgment: the resume into the retried turn was exercised, not only a replay.
    expect(stepsWithJudgment.length).toBeGreaterThan(0);
  });
});
