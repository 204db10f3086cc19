import { describe, expect, it } from 'vitest';
import {
  createTraceRecorder,
  parseTrace,
  TraceFormatError,
  type TraceEntry,
  type TraceEntryOf,
} from 'agentchart/trace';
import { toJsonValue, INSPECTION_LIMITS } from '../../src/trace/serialize.js';
import { FINAL_TEXT, recordSession, type RecordedSession } from './session.js';

const of = <K extends TraceEntry['kind']>(entries: TraceEntry[], kind: K) =>
  entries.filter((entry): entry is TraceEntryOf<K> => entry.kind === kind);

describe('createTraceRecorder on a real scripted session', () => {
  let session: RecordedSession;
  let entries: TraceEntry[];
  const labelOf = (sessionId: string) => of(entries, 'actor').find((actor) => actor.sessionId === sessionId)?.label;

  it('records a trace that parses, with a header and session-relative timestamps', async () => {
    session = await recordSession();
    expect(session.result.status).toBe('completed');
    const trace = parseTrace(session.jsonl);
    entries = trace.entries;
    expect(trace.header).toMatchObject({ kind: 'header', format: 'agentchart-trace', version: 1 });
    expect(session.jsonl.endsWith('\n')).toBe(true);
    // The clock ticks once at start and once per entry: t = i + 1 exactly.
    expect(entries.every((entry, index) => entry.i === index && entry.t === index + 1)).toBe(true);
    expect(of(entries, 'recorderError')).toEqual([]);
  });

  it('writes each machine definition once, before its first actor', () => {
    const machines = of(entries, 'machine');
    expect(machines.map((machine) => machine.machineId)).toEqual(['master', 'turn', 'toolCall']);
    expect(machines[2]?.root).toEqual({
      id: 'toolCall',
      key: 'toolCall',
      type: 'compound',
      states: ['starting', 'executing', 'succeeded', 'failed', 'cancelled', 'timedOut', 'skipped'].map((key) => ({
        id: `toolCall.${key}`,
        key,
        type: key === 'starting' || key === 'executing' ? 'atomic' : 'final',
        states: [],
      })),
    });
  });

  it('names the machine actors from their input: the master, each turn, each tool call', () => {
    const machineActors = of(entries, 'actor').filter((actor) => actor.machineId !== null);
    expect(machineActors.map((actor) => [actor.machineId, actor.label])).toEqual([
      ['master', 'master'],
      ['turn', 'turn 0'],
      ['toolCall', 'lookup · c1'],
      ['toolCall', 'sum · c2'],
      ['toolCall', 'write_note · c3'],
      ['turn', 'turn 1'],
      ['toolCall', 'broken · c4'],
      ['turn', 'turn 2'],
    ]);
    // Turns are invoked by the master; every tool-call actor is a child of the turn that asked for it.
    const master = machineActors[0]?.sessionId;
    expect(
      machineActors.filter((actor) => actor.machineId === 'turn').every((actor) => actor.parentId === master),
    ).toBe(true);
    const turnOf = (label: string) => machineActors.find((actor) => actor.label === label)?.sessionId;
    expect(
      machineActors.filter((actor) => actor.machineId === 'toolCall').map((actor) => [actor.label, actor.parentId]),
    ).toEqual([
      ['lookup · c1', turnOf('turn 0')],
      ['sum · c2', turnOf('turn 0')],
      ['write_note · c3', turnOf('turn 0')],
      ['broken · c4', turnOf('turn 1')],
    ]);
  });

  it('records every microstep of turn 0, in order, with the state value after it', () => {
    const turn0 = of(entries, 'actor').find((actor) => actor.label === 'turn 0')?.sessionId;
    const steps = of(entries, 'transition')
      .filter((entry) => entry.sessionId === turn0)
      .map((entry) =>
        entry.transitions.map((transition) => `${transition.source} → ${transition.targets.join(',')}`).join('; '),
      );
    expect(steps).toEqual([
      'turn.USER_INPUT.checkingPolicies → turn.ASSISTANT',
      'turn.ASSISTANT → turn.TOOL_EXECUTION',
      'turn.TOOL_EXECUTION.dispatching → turn.TOOL_EXECUTION.approval',
      'turn.TOOL_EXECUTION.approval → turn.TOOL_EXECUTION.askingApproval',
      // The request goes out (targetless); with every request out, the call waits for its decision.
      'turn.TOOL_EXECUTION.askingApproval → ',
      'turn.TOOL_EXECUTION.askingApproval.requesting → turn.TOOL_EXECUTION.askingApproval.waiting',
      // The verdict decides the call (targetless); with nothing left to decide, the batch goes on.
      'turn.TOOL_EXECUTION.askingApproval.waiting → ',
      'turn.TOOL_EXECUTION.askingApproval.waiting → turn.TOOL_EXECUTION.approval',
      'turn.TOOL_EXECUTION.approval → turn.TOOL_EXECUTION.dispatch',
      'turn.TOOL_EXECUTION.dispatch → turn.TOOL_EXECUTION.running',
      // Two of the three calls end: the pool records them (targetless); the last one ends the batch,
      // and with nothing to check after it the turn commits and closes in the same step.
      'turn.TOOL_EXECUTION.running → ',
      'turn.TOOL_EXECUTION.running → ',
      'turn.TOOL_EXECUTION.running → turn.done',
    ]);
    const values = of(entries, 'transition')
      .filter((entry) => entry.sessionId === turn0)
      .map((entry) => entry.value);
    expect(values[9]).toEqual({ TOOL_EXECUTION: 'running' });
    expect(values.at(-1)).toBe('done');
  });

  it('records the final snapshot of every machine actor', () => {
    const finals = of(entries, 'snapshot')
      .filter((entry) => entry.status !== 'active')
      .map((entry) => `${labelOf(entry.sessionId)}: ${JSON.stringify(entry.value)} ${entry.status}`);
    expect(finals.sort()).toEqual(
      [
        'broken · c4: "failed" done',
        'lookup · c1: "succeeded" done',
        'master: "ended" done',
        'sum · c2: "succeeded" done',
        'turn 0: "done" done',
        'turn 1: "done" done',
        'turn 2: "done" done',
        'write_note · c3: "succeeded" done',
      ].sort(),
    );
  });

  it('records the events delivered to machine actors, with their source, and named actions', () => {
    const masterId = of(entries, 'actor')[0]?.sessionId;
    const toMaster = of(entries, 'event').filter((entry) => entry.sessionId === masterId);
    expect(
      toMaster.map((entry) => [entry.event.type, entry.sourceId === null ? null : labelOf(entry.sourceId)]),
    ).toEqual([
      ['xstate.init', null],
      ['START', null],
      ['xstate.done.actor.turn', 'turn 0'],
      ['xstate.done.actor.turn', 'turn 1'],
      ['xstate.done.actor.turn', 'turn 2'],
    ]);
    const actions = of(entries, 'action')
      .filter((entry) => entry.sessionId === masterId)
      .map((entry) => entry.action);
    expect(actions.filter((action) => action.startsWith('announce'))).toEqual([
      'announceAgentStart',
      'announceAgentEnd',
    ]);
  });

  it('records every agent event, unchanged and in order', () => {
    expect(of(entries, 'agent').map((entry) => entry.event)).toEqual(session.events);
    const last = session.events.at(-1);
    expect(last?.type === 'agentEnd' && last.messages.at(-1)).toMatchObject({
      role: 'assistant',
      content: [{ type: 'text', text: FINAL_TEXT }],
    });
  });
});

describe('createTraceRecorder, unit', () => {
  it('never throws into XState when its sink fails; the run goes on', async () => {
    let written = 0;
    const recorder = createTraceRecorder({
      write: () => {
        written += 1;
        if (written > 3) throw new Error('disk full');
      },
      keepLines: false,
    });
    expect(() =>
      recorder.inspect.next?.({
        type: '@xstate.action',
        actorRef: {} as never,
        rootId: 'x',
        action: { type: 'a', params: {} },
      }),
    ).not.toThrow();
    expect(() => recorder.events.next?.({ type: 'agentStart', runId: 'r', seq: 0 })).not.toThrow();
    expect(recorder.lines()).toEqual([]);
  });

  it('turns an inspection event it cannot read into a recorderError line', () => {
    let tick = 0;
    const recorder = createTraceRecorder({ now: () => tick++ });
    const broken = {
      sessionId: 'x:9',
      get logic(): unknown {
        throw new Error('no logic here');
      },
    };
    recorder.inspect.next?.({ type: '@xstate.actor', actorRef: broken as never, rootId: 'x:9' });
    expect(
      recorder
        .lines()
        .slice(1)
        .map((line) => JSON.parse(line)),
    ).toEqual([{ kind: 'recorderError', i: 0, t: 1, message: '@xstate.actor: no logic here' }]);
  });

  it('bounds inspection payloads: Maps, cycles, long strings, functions, bigints, actor refs', () => {
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle.self = cycle;
    const value = {
      map: new Map([[1, 'one']]),
      set: new Set(['a']),
      cycle,
      long: 'x'.repeat(400),
      fn: () => 1,
      big: 12n,
      nan: Number.NaN,
      missing: undefined,
      error: new TypeError('bad'),
      actor: { sessionId: 'x:3', send: () => undefined },
      many: Array.from({ length: 25 }, (_, index) => index),
      deep: { a: { b: { c: { d: { e: { f: 1 } } } } } },
    };
    expect(toJsonValue(value, INSPECTION_LIMITS)).toEqual({
      map: { 1: 'one' },
      set: ['a'],
      cycle: { name: 'loop', self: '[circular]' },
      long: `${'x'.repeat(300)}…`,
      big: '12n',
      nan: 'NaN',
      missing: null,
      error: { name: 'TypeError', message: 'bad' },
      actor: '[actor x:3]',
      many: [...Array.from({ length: 20 }, (_, index) => index), '[+5 more]'],
      deep: { a: { b: { c: { d: '[…]' } } } },
    });
  });
});

describe('parseTrace', () => {
  const header = '{"kind":"header","format":"agentchart-trace","version":1,"startedAt":"2026-01-01T00:00:00.000Z"}';

  it('names the first bad line', () => {
    expect(() => parseTrace('')).toThrow(new TraceFormatError(1, 'empty trace: no header line'));
    expect(() => parseTrace('{"kind":"actor"}')).toThrow(/^trace line 1: expected the header/);
    expect(() => parseTrace(`${header}\nnot json`)).toThrow(new TraceFormatError(2, 'not valid JSON'));
    expect(() => parseTrace(`${header}\n{"kind":"action","i":0,"t":1,"sessionId":"x:0"}`)).toThrow(
      /^trace line 2: .*action/,
    );
    expect(() => parseTrace(`${header}\n{"kind":"action","i":3,"t":1,"sessionId":"x:0","action":"a"}`)).toThrow(
      new TraceFormatError(2, 'entry index 3, expected 0'),
    );
  });

  it('reads a header-only trace as empty', () => {
    expect(parseTrace(`${header}\n`).entries).toEqual([]);
  });
});
