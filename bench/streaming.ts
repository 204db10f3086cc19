import { createAgent } from 'agentchart';
import { generateText, streamText } from 'ai';
import { aiSdkOptions, aiSdkWorkDone, scriptedLanguageModel } from './ai-sdk-driver.js';
import { expectWork, interleave, type TimedRun } from './drivers.js';
import { piAgent, piWorkDone } from './pi-driver.js';
import { replayModel } from './replay-model.js';
import { median, sampled, startClock, type Sampled } from './stats.js';
import { benchTools, type ReplyScript, type WorkDone } from './workload.js';

/**
 * Streamed text, consumed live: T turns whose replies stream D text deltas and then ask for one
 * instant tool call, and a last reply of D deltas; a subscriber attached to each library's own
 * event stream checks every delta as it arrives (the same text, in order, none missing) and a run
 * that misses one fails the benchmark. agentchart streams with `streaming: 'live'` on the replay
 * model; pi through `agent.subscribe`; the AI SDK's `streamText` through `fullStream`. The AI SDK's
 * `generateText` cannot stream: it gets the same text in one piece per reply, checked at the end.
 */

export type StreamingContender = 'agentchart' | 'pi' | 'aiSdk' | 'aiSdkGenerate';
export const STREAMING_CONTENDERS: readonly StreamingContender[] = ['agentchart', 'pi', 'aiSdk', 'aiSdkGenerate'];

export interface StreamingResult {
  turns: number;
  deltasPerReply: number;
  /** Deltas per session: (T + 1) × D. */
  deltas: number;
  /** µs per delta (the session's whole time: turns and tool calls included), per contender. */
  wall: Record<StreamingContender, Sampled>;
  cpu: Record<StreamingContender, Sampled>;
  /** agentchart / peer: medians (wall, CPU) and the median of per-round ratios (paired). */
  ratios: Record<Exclude<StreamingContender, 'agentchart'>, { wall: number; cpu: number; paired: number }>;
  /** Every live subscriber saw every delta, in order (a run that did not throws). */
  checked: boolean;
}

/** The text of delta `index` of reply `reply`: a short word, as a token of streamed text is. */
const deltaText = (reply: number, index: number) => ` w${reply}.${index}`;

/** The script and the deltas a subscriber must see, in order. */
export function streamingScript(turns: number, deltas: number): { script: ReplyScript; expected: string[] } {
  const replies = Array.from({ length: turns + 1 }, (_, reply) =>
    Array.from({ length: deltas }, (_, index) => deltaText(reply, index)),
  );
  const call = [{ name: 'noop', arguments: { i: 0 } }];
  const script: ReplyScript = (callIndex) => {
    const text = replies[callIndex];
    if (!text) return undefined;
    return { text, toolCalls: callIndex < turns ? call : [] };
  };
  return { script, expected: replies.flat() };
}

/** Checks deltas against the expected sequence as they arrive. */
class DeltaCheck {
  private seen = 0;
  private wrong = -1;

  /** Each reply's text, whole. */
  private readonly replies: string[] = [];

  constructor(
    private readonly expected: readonly string[],
    private readonly perReply: number,
  ) {
    for (let from = 0; from < expected.length; from += perReply)
      this.replies.push(expected.slice(from, from + perReply).join(''));
  }

  /** A whole reply's text at once (a library that does not stream): its deltas, joined. */
  seeReply(reply: number, text: string): void {
    if (this.wrong < 0 && (this.seen !== reply * this.perReply || text !== this.replies[reply])) this.wrong = this.seen;
    this.seen += this.perReply;
  }

  readonly see = (text: string): void => {
    if (this.wrong < 0 && text !== this.expected[this.seen]) this.wrong = this.seen;
    this.seen++;
  };

  /** Throws unless every delta arrived once, in order. */
  verify(label: string): void {
    if (this.wrong >= 0 || this.seen !== this.expected.length) {
      const where = this.wrong >= 0 ? `delta #${this.wrong} differs` : `${this.seen} of ${this.expected.length} seen`;
      throw new Error(`bench streaming: ${label} did not deliver every delta live (${where})`);
    }
  }
}

/** One session of `contender`, built untimed; the timed part from prompt to result, its deltas checked. */
export function prepareStreaming(
  contender: StreamingContender,
  turns: number,
  deltas: number,
): () => Promise<TimedRun> {
  const { script, expected } = streamingScript(turns, deltas);
  const check = new DeltaCheck(expected, deltas);
  const timed = async (session: () => Promise<WorkDone>): Promise<TimedRun> => {
    const clock = startClock();
    const work = await session();
    const timing = clock.stop();
    check.verify(contender);
    return { ...timing, ...work };
  };
  switch (contender) {
    case 'agentchart': {
      const agent = createAgent({ model: replayModel(script), tools: benchTools, streaming: 'live' });
      return () =>
        timed(async () => {
          const run = agent.prompt('go');
          run.events.subscribe((event) => {
            if (event.type === 'messageUpdate' && event.delta.type === 'text') check.see(event.delta.text);
          });
          const result = await run.result;
          const { turns: done, toolCallsExecuted } = result.counters;
          return { status: result.status, turns: done, toolCallsExecuted };
        });
    }
    case 'pi': {
      const agent = piAgent(script);
      agent.subscribe((event) => {
        if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta')
          check.see(event.assistantMessageEvent.delta);
      });
      return () =>
        timed(async () => {
          await agent.prompt('go');
          return piWorkDone(agent);
        });
    }
    case 'aiSdk': {
      const options = aiSdkOptions(scriptedLanguageModel(script), turns);
      return () =>
        timed(async () => {
          const result = streamText(options);
          for await (const part of result.fullStream) if (part.type === 'text-delta') check.see(part.text);
          return aiSdkWorkDone(await result.steps, await result.finishReason);
        });
    }
    case 'aiSdkGenerate': {
      const options = aiSdkOptions(scriptedLanguageModel(script), turns);
      return () =>
        timed(async () => {
          const result = await generateText(options);
          // No stream to watch: the text of every step, checked whole against the deltas it stands for.
          for (const [reply, step] of result.steps.entries()) check.seeReply(reply, step.text);
          return aiSdkWorkDone(result.steps, result.finishReason);
        });
    }
  }
}

export async function streamingBenchmark(
  turns: number,
  deltas: number,
  rounds: number,
  warmups: number,
): Promise<StreamingResult> {
  const samples = await interleave(STREAMING_CONTENDERS, rounds, warmups, async (contender) => {
    const run = await prepareStreaming(contender, turns, deltas)();
    expectWork(`streaming ${contender}`, run, turns + 1, turns);
    return run;
  });
  const total = (turns + 1) * deltas;
  const perDelta = (contender: StreamingContender, pick: (run: TimedRun) => number) =>
    samples[contender].map((run) => (pick(run) * 1000) / total);
  const both = <T>(make: (contender: StreamingContender) => T) =>
    Object.fromEntries(STREAMING_CONTENDERS.map((c) => [c, make(c)])) as Record<StreamingContender, T>;
  const wall = both((c) =>
    sampled(
      perDelta(c, (run) => run.ms),
      3,
    ),
  );
  const cpu = both((c) =>
    sampled(
      perDelta(c, (run) => run.cpuMs),
      3,
    ),
  );
  const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
  const ours = perDelta('agentchart', (run) => run.ms);
  const peerRatios = (peer: Exclude<StreamingContender, 'agentchart'>) => {
    const theirs = perDelta(peer, (run) => run.ms);
    return {
      wall: ratio(wall.agentchart.median, wall[peer].median),
      cpu: ratio(cpu.agentchart.median, cpu[peer].median),
      paired: ratio(median(ours.map((value, round) => value / (theirs[round] as number))), 1),
    };
  };
  return {
    turns,
    deltasPerReply: deltas,
    deltas: total,
    wall,
    cpu,
    ratios: { pi: peerRatios('pi'), aiSdk: peerRatios('aiSdk'), aiSdkGenerate: peerRatios('aiSdkGenerate') },
    checked: true,
  };
}
