import { beforeAll, describe, expect, it } from 'vitest';
import {
  actorStatesAt,
  activeStateIds,
  agentEntries,
  describeValue,
  readTraceText,
  type ViewerModel,
} from '../../src/trace/viewer/model.js';
import { buildTimeline, type TimelineData } from '../../src/trace/viewer/timeline-model.js';
import { recordSession } from './session.js';

/** The viewer's reading of a recorded session, checked in Node (the page runs the same code). */
describe('viewer model', () => {
  let model: ViewerModel;
  let timeline: TimelineData;
  const sessionOf = (label: string) =>
    [...model.actors.values()].find((actor) => actor.label === label)?.sessionId ?? '';
  const activeAt = (stepIndex: number, label: string) => {
    const step = model.steps[stepIndex];
    const actor = model.actors.get(sessionOf(label));
    const state = actorStatesAt(model, step?.entry ?? -1).get(sessionOf(label));
    const root = actor?.machineId ? model.machines.get(actor.machineId) : undefined;
    return state && root ? activeStateIds(root, state.value) : [];
  };

  beforeAll(async () => {
    model = readTraceText((await recordSession()).jsonl);
    timeline = buildTimeline(agentEntries(model));
  });

  it('walks the transitions and status changes, never a repeated snapshot', () => {
    const described = model.steps
      .slice(0, 6)
      .map((step) => `${model.actors.get(step.sessionId)?.label} ${step.kind} ${describeValue(step.value)}`);
    expect(described).toEqual([
      'master snapshot idle',
      'master transition running.preTurn',
      'turn 0 transition ASSISTANT.streaming',
      'master transition running.turn',
      'turn 0 transition TOOL_EXECUTION.dispatching',
      'turn 0 transition TOOL_EXECUTION.approval',
    ]);
    // Every microstep, the master's first snapshot, and each state of the 4 tool-call actors
    // (starting, executing, their final state: they report snapshots, not microsteps).
    const microsteps = model.entries.filter((entry) => entry.kind === 'transition').length;
    expect(model.steps).toHaveLength(microsteps + 1 + 4 * 3);
    expect(model.steps.at(-1)).toMatchObject({ kind: 'transition', value: 'ended', status: 'done' });
  });

  it('knows every active state at a step, compound states included', () => {
    const collecting = model.steps.findIndex(
      (step) => step.sessionId === sessionOf('turn 0') && describeValue(step.value) === 'TOOL_EXECUTION.running',
    );
    expect(model.steps[collecting]?.kind).toBe('transition');
    expect(activeAt(collecting, 'turn 0')).toEqual(['turn.TOOL_EXECUTION', 'turn.TOOL_EXECUTION.running']);
    expect(activeAt(collecting, 'master')).toEqual(['master.running', 'master.running.turn']);
    // The tool-call actors are created in the step the turn enters running, and start once that step is over.
    expect(activeAt(collecting, 'sum · c2')).toEqual(['toolCall.starting']);
    const executing = model.steps.findIndex(
      (step) => step.sessionId === sessionOf('sum · c2') && describeValue(step.value) === 'executing',
    );
    expect(executing).toBeGreaterThan(collecting);
    expect(activeAt(executing, 'sum · c2')).toEqual(['toolCall.executing']);
    const askingApproval = model.steps.findIndex(
      (step) => describeValue(step.value) === 'TOOL_EXECUTION.askingApproval.waiting',
    );
    expect(activeAt(askingApproval, 'turn 0')).toEqual([
      'turn.TOOL_EXECUTION',
      'turn.TOOL_EXECUTION.askingApproval',
      'turn.TOOL_EXECUTION.askingApproval.waiting',
    ]);
    expect(activeAt(model.steps.length - 1, 'master')).toEqual(['master.ended']);
    expect(activeAt(model.steps.length - 1, 'broken · c4')).toEqual(['toolCall.failed']);
  });

  it('ends an actor at its microstep into a top-level final state', () => {
    const intoDone = model.steps.find((step) => step.sessionId === sessionOf('turn 0') && step.value === 'done');
    // The last call's end: nothing to check after the batch, so the turn commits and closes in that step.
    expect(intoDone).toMatchObject({
      kind: 'transition',
      status: 'done',
      edges: [{ source: 'turn.TOOL_EXECUTION.running', target: 'turn.done' }],
    });
  });

  it('lays the agent events out per turn: the model lane, then a lane per tool call in call order', () => {
    expect(timeline.turns.map((turn) => [turn.turnIndex, turn.reason, turn.lanes.map((lane) => lane.label)])).toEqual([
      [0, 'toolsExecuted', ['model', 'lookup · c1', 'sum · c2', 'write_note · c3']],
      [1, 'toolsExecuted', ['model', 'broken · c4']],
      [2, 'complete', ['model']],
    ]);
    const lanes = timeline.turns[0]?.lanes ?? [];
    expect(lanes.map((lane) => lane.spans.map((span) => `${span.kind}:${span.status}`))).toEqual([
      ['model:ok'],
      ['execution:ok'],
      ['execution:ok'],
      ['approval:approved', 'execution:ok'],
    ]);
    expect(lanes.map((lane) => lane.ticks.length)).toEqual([0, 1, 2, 0]);
    expect(timeline.turns[1]?.lanes[1]?.spans.map((span) => [span.status, span.title])).toEqual([
      ['error', 'broken({}) → disk on fire'],
    ]);
    expect(timeline.session.map((event) => event.text)).toEqual([
      'agent started',
      'agent ended: completed · naturalEnd',
    ]);
  });

  it('explains a bad file instead of failing', () => {
    expect(() => readTraceText('')).toThrow('the file is empty');
    expect(() => readTraceText('{"hello":1}')).toThrow('line 1: not an agentchart trace (no header line)');
    expect(() => readTraceText('{"kind":"header","format":"agentchart-trace","version":2}')).toThrow(
      'line 1: trace version 2 is not supported (this viewer reads version 1)',
    );
    expect(() => readTraceText('{"kind":"header","format":"agentchart-trace","version":1}\n{oops')).toThrow(
      'line 2: not valid JSON',
    );
  });
});
