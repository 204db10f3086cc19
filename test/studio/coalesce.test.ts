import { describe, expect, it } from 'vitest';
import type { AgentEvent } from 'agentchart';
import { StreamCoalescer } from '../../src/studio/coalesce.js';

type Update = Extract<AgentEvent, { type: 'messageUpdate' }>;

const text = (seq: number, piece: string, index = 0, runId = 'run_a'): Update => ({
  type: 'messageUpdate',
  turnIndex: 0,
  delta: { type: 'text', index, text: piece },
  runId,
  seq,
});
const call = (seq: number, piece: string, id = 'call_1'): Update => ({
  type: 'messageUpdate',
  turnIndex: 0,
  delta: { type: 'toolCall', index: 1, id, name: 'read', argumentsDelta: piece },
  runId: 'run_a',
  seq,
});

/** Feeds events as the studio's flush does and returns what the page would get. */
function coalesced(events: Update[]): Array<{ event: AgentEvent; t: number }> {
  const run = new StreamCoalescer();
  const out: Array<{ event: AgentEvent; t: number }> = [];
  events.forEach((event, index) => {
    if (!run.extends(event)) {
      const taken = run.take();
      if (taken) out.push(taken);
    }
    run.add(event, 1000 + index);
  });
  const taken = run.take();
  if (taken) out.push(taken);
  return out;
}

describe('stream deltas coalesced for the page', () => {
  it('joins consecutive deltas of one block: the text theirs joined, seq and time the last one, how many it holds', () => {
    const [only, ...rest] = coalesced([text(4, 'Hel'), text(5, 'lo '), text(6, 'world')]);
    expect(rest).toEqual([]);
    expect(only).toEqual({
      event: { ...text(6, 'Hello world'), coalesced: 3 },
      t: 1002,
    });
  });

  it('keeps a lone delta as it is (no coalesced field)', () => {
    expect(coalesced([text(4, 'x')])).toEqual([{ event: text(4, 'x'), t: 1000 }]);
  });

  it('breaks at another block, another tool call, another run, or a gap in seqs', () => {
    const out = coalesced([
      text(1, 'a'),
      text(2, 'b', 1),
      call(3, '{"p'),
      call(4, '":1}'),
      call(5, '{}', 'call_2'),
      text(6, 'c', 1, 'run_b'),
      text(8, 'd', 1, 'run_b'),
    ]);
    expect(out.map(({ event }) => event)).toEqual([
      text(1, 'a'),
      text(2, 'b', 1),
      { ...call(4, '{"p":1}'), coalesced: 2 },
      call(5, '{}', 'call_2'),
      text(6, 'c', 1, 'run_b'),
      text(8, 'd', 1, 'run_b'),
    ]);
  });
});
