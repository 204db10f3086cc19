import { fromPromise, not, setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { toDot } from '../../src/viz/dot.js';
import { toMermaid } from '../../src/viz/mermaid.js';

const sample = setup({
  types: { events: {} as { type: 'GO' } | { type: 'STOP' } },
  actors: { fetchThing: fromPromise(async () => 1) },
  guards: { isReady: () => true },
  actions: { announce: () => {} },
  delays: { grace: 100 },
}).createMachine({
  id: 'sample',
  initial: 'idle',
  states: {
    idle: { on: { GO: { target: 'working', guard: 'isReady', actions: 'announce' } } },
    working: {
      initial: 'fetching',
      on: { STOP: { actions: 'announce' } },
      states: {
        fetching: {
          invoke: {
            src: 'fetchThing',
            onDone: [{ guard: ({ event }) => event.output > 0, target: 'waiting' }, { target: '#sample.done' }],
          },
        },
        waiting: { after: { grace: 'settled', 500: '#sample.done' } },
        settled: { always: [{ guard: not('isReady'), target: 'waiting' }, { target: '#sample.done' }] },
      },
    },
    done: { type: 'final', entry: 'announce' },
  },
});

describe('diagrams from the state tree', () => {
  it('Mermaid: states in their blocks, guards, delays, invocations as notes, crossing edges at top level', () => {
    expect(toMermaid(sample, { header: 'sample' })).toBe(
      [
        '%% sample',
        'stateDiagram-v2',
        '  [*] --> idle',
        '  idle',
        '  state working {',
        '    [*] --> fetching',
        '    fetching',
        '    note right of fetching : invoke fetchThing',
        '    waiting',
        '    settled',
        '    fetching --> waiting : done(fetchThing) [event.output>0]',
        '    waiting --> settled : after(grace)',
        '    settled --> waiting : always [not(isReady)]',
        '  }',
        '  done',
        '  done --> [*]',
        '  idle --> working : GO [isReady]',
        '  working --> working : STOP',
        '  fetching --> done : done(fetchThing)',
        '  waiting --> done : after(500ms)',
        '  settled --> done : always',
        '',
      ].join('\n'),
    );
  });

  it('DOT: compound states are clusters entered through their initial dot; actions under the event', () => {
    const dot = toDot(sample);
    expect(dot).toContain('subgraph "cluster_sample.working" {');
    expect(dot).toContain(
      '"sample.idle" -> "sample.working.__initial" [label="GO [isReady]\\n/ announce", lhead="cluster_sample.working"];',
    );
    expect(dot).toContain(
      '"sample.working.__initial" -> "sample.working.__initial" [label="STOP\\n/ announce", style=dashed];',
    );
    expect(dot).toContain('"sample.done" [label="done\\nentry / announce", peripheries=2, fillcolor="#eeeeee"];');
    expect(dot).toContain('"sample.working.settled" -> "sample.done" [label="always", style=dashed];');
  });
});
