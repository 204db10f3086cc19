import type { Model, ModelStreamEvent } from 'agentchart';
import { scriptedCallId, threePieces, type Reply, type ReplyScript } from './workload.js';

/**
 * The least a Model can do: each call replays its reply's events, built when the call starts,
 * through a bare async iterator (one resolved promise per event: no generator, no timers, no
 * request recording). The
 * streaming workload and the load scenario feed agentchart with it, as the peers' adapters feed
 * theirs (bench/pi-driver.ts, bench/ai-sdk-driver.ts): the same events, all available at once.
 */
export interface ReplayModel extends Model {
  /** How many times `stream` was called. */
  readonly calls: number;
}

export function replayModel(script: ReplyScript, name = 'replay'): ReplayModel {
  let calls = 0;
  return {
    name,
    get calls() {
      return calls;
    },
    stream() {
      const callIndex = calls++;
      const reply = script(callIndex);
      if (!reply) throw new Error(`replay model: call #${callIndex} is beyond the script`);
      return replay(replayEvents(reply, callIndex));
    },
  };
}

/** A reply as the Model port streams it: start, the text deltas, each call in pieces, done. */
export function replayEvents(reply: Reply, callIndex: number): ModelStreamEvent[] {
  const events: ModelStreamEvent[] = [{ type: 'start' }];
  for (const delta of reply.text) events.push({ type: 'textDelta', delta });
  reply.toolCalls.forEach((call, index) => {
    events.push({ type: 'toolCallStart', index, id: scriptedCallId(callIndex, index), name: call.name });
    for (const argumentsDelta of threePieces(JSON.stringify(call.arguments)))
      events.push({ type: 'toolCallDelta', index, argumentsDelta });
    events.push({ type: 'toolCallEnd', index });
  });
  events.push({ type: 'done', stopReason: reply.toolCalls.length > 0 ? 'toolUse' : 'stop' });
  return events;
}

function replay(events: readonly ModelStreamEvent[]): AsyncIterable<ModelStreamEvent> {
  let next = 0;
  const iterator: AsyncIterator<ModelStreamEvent> = {
    next: () =>
      Promise.resolve(
        next < events.length
          ? { done: false, value: events[next++] as ModelStreamEvent }
          : { done: true, value: undefined },
      ),
    return: () => Promise.resolve({ done: true, value: undefined }),
  };
  return { [Symbol.asyncIterator]: () => iterator };
}
