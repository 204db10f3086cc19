import { describe, expect, it } from 'vitest';
import { transition } from 'xstate';
import type { TurnOutput } from '../../machines/turn.types.js';
import { explore, type Effect, type GraphEdge } from './harness/explore.js';
import { NO_FEATURES, provideTurn, turnEnvironment, turnInput, type TurnConfig } from './turn-model.js';

/**
 * A batch of three calls that each need approval, walked edge by edge in the explored graph: the three
 * requests go out in one step, in call order; the calls are decided in every order; an abort between two
 * decisions withdraws the ones still waiting; the batch starts only after the last decision.
 */

const IDS = ['call_6', 'call_7', 'call_8'];
const REQUESTS = IDS.map((id) => `approval:requested:${id}`);
const PARALLEL = { ...NO_FEATURES, execution: { kind: 'parallel' as const } };
const ORDERS = [
  [0, 1, 2],
  [0, 2, 1],
  [1, 0, 2],
  [1, 2, 0],
  [2, 0, 1],
  [2, 1, 0],
].map((order) => order.map((index) => IDS[index] as string));

function graphFor(answers: TurnConfig['answers']) {
  const config: TurnConfig = { name: 'three', approvals: true, partition: 'valid', replies: ['threeWrites'], answers };
  return explore(provideTurn(), turnEnvironment(config), {
    input: turnInput(PARALLEL, 'freshLastChance'),
    limit: 20_000,
  });
}

type Graph = ReturnType<typeof graphFor>;

/** Follows the edges with these labels from the initial state; returns every step's effects and the state reached. */
function follow(graph: Graph, labels: readonly string[]) {
  let key = graph.initial;
  const effects: Effect[][] = [];
  for (const label of labels) {
    const edge = graph.nodes.get(key)?.edges.find((candidate: GraphEdge) => candidate.label === label);
    if (!edge) throw new Error(`no edge "${label}" after ${labels.slice(0, labels.indexOf(label)).join(' → ')}`);
    effects.push([...edge.effects]);
    key = edge.to;
  }
  const node = graph.nodes.get(key);
  if (!node) throw new Error('no state');
  return { effects, walk: node.walk, edges: node.edges.map((edge) => edge.label) };
}

const of = (effects: readonly Effect[], action: string) => effects.filter((effect) => effect.action === action);

describe('model checking: a batch of three approvals', () => {
  for (const [answers, prefix] of [
    ['handlerYesNo', 'approval'],
    ['resolveYesNo', 'decided'],
  ] as const) {
    const graph = graphFor(answers);

    it(`${answers}: the three requests go out together, in call order`, () => {
      const { effects, walk } = follow(graph, ['reply:threeWrites', ...REQUESTS]);
      expect(effects.slice(1).map((step) => of(step, 'announceApprovalRequest').map((e) => e.detail))).toEqual(
        IDS.map((id) => [[id]]),
      );
      expect(walk.snapshot.matches({ TOOL_EXECUTION: { askingApproval: 'waiting' } })).toBe(true);
      // Every waiting call can be decided first.
      const firsts = follow(graph, ['reply:threeWrites', ...REQUESTS]).edges.filter((label) => label.endsWith(':yes'));
      expect(firsts.sort()).toEqual(IDS.map((id) => `${prefix}:${id}:yes`));
    });

    it.each(ORDERS)(`${answers}: decided in the order %s, %s, %s, the batch starts after the last`, (...order) => {
      const decisions = order.map((id, index) => `${prefix}:${id}:${index === 1 ? 'no' : 'yes'}`);
      const { effects, walk } = follow(graph, ['reply:threeWrites', ...REQUESTS, ...decisions]);
      const resolved = effects.slice(4).map((step) => of(step, 'announceApprovalResolved').map((e) => e.detail));
      expect(resolved).toEqual(order.map((call, index) => [{ call, approved: index !== 1 }]));
      // Nothing starts before the last decision; then the two approved calls start together.
      expect(effects.slice(4, 6).flatMap((step) => of(step, 'startCalls'))).toEqual([]);
      expect(of(effects[6]!, 'countRejectedCall')).toEqual([]);
      expect(of(effects[5]!, 'countRejectedCall')).toHaveLength(1);
      expect(of(effects[6]!, 'startCalls').map((effect) => effect.detail)).toEqual([[0, 1]]);
      expect(walk.snapshot.matches({ TOOL_EXECUTION: 'running' })).toBe(true);
      const running = walk.snapshot.context.prepared.map((entry) => entry.call.id);
      expect(running).toEqual(IDS.filter((id) => id !== order[1]));
    });

    it(`${answers}: an abort between two decisions withdraws the two still waiting and answers every call`, () => {
      const { effects, walk } = follow(graph, ['reply:threeWrites', ...REQUESTS, `${prefix}:call_7:yes`, 'ABORT']);
      const abort = effects[5]!;
      expect(of(abort, 'withdrawApprovals').map((effect) => effect.detail)).toEqual([['call_6', 'call_8']]);
      expect(of(abort, 'startCalls')).toEqual([]);
      expect(walk.status).toBe('done');
      const output = walk.snapshot.output as TurnOutput;
      expect(output.kind).toBe('aborted');
      expect(output.toolResults.map((result) => [result.toolCallId, result.isError])).toEqual([
        ['call_6', true],
        ['call_7', true],
        ['call_8', true],
      ]);
    });
  }

  it('an abort from the subscriber of the first request: only that request is out, and only it is withdrawn', () => {
    const graph = graphFor('handlerYesNo');
    const { effects, walk } = follow(graph, ['reply:threeWrites', REQUESTS[0]!, 'ABORT']);
    expect(of(effects[2]!, 'withdrawApprovals').map((effect) => effect.detail)).toEqual([['call_6']]);
    expect(effects.flatMap((step) => of(step, 'announceApprovalRequest').flatMap((e) => e.detail as string[]))).toEqual(
      ['call_6'],
    );
    expect((walk.snapshot.output as TurnOutput).toolResults.map((result) => result.toolCallId)).toEqual(IDS);
  });

  it('a second verdict on a call already decided changes nothing (each call is decided once)', () => {
    const graph = graphFor('handlerYesNo');
    const { walk } = follow(graph, ['reply:threeWrites', ...REQUESTS, 'approval:call_6:yes']);
    const again = {
      type: 'APPROVAL_VERDICT',
      toolCallId: 'call_6',
      toolName: 'write',
      verdict: { kind: 'denied', reason: 'late' },
    } as const;
    const [next, actions] = transition(provideTurn(), walk.snapshot, again);
    expect(next.context).toBe(walk.snapshot.context);
    expect(actions.map((action) => action.type)).toEqual([]);
    const waiting = next.context.prepared.filter((entry) => !entry.approved).map((entry) => entry.call.id);
    expect(waiting).toEqual(['call_7', 'call_8']);
  });
});
