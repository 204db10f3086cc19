// A Restate worker for the tests: the agent object with the scripted model and tools that record
// their side effects in one file per session (model calls and tool runs, with the worker's pid), so
// the tests count them across processes. The scenario is chosen by the session id's prefix.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import { defineTool, type AgentOptions, type Model } from 'agentchart';
import { agentObject } from 'agentchart/restate';
import { scriptedModel, type ScriptEntry } from 'agentchart/testing';

const port = Number(process.env.AGENTCHART_WORKER_PORT);
const logDir = process.env.AGENTCHART_WORKER_LOG ?? '.';

export const logFile = (sessionId: string) => join(logDir, `${sessionId}.log`);
const record = (sessionId: string, line: string) => appendFileSync(logFile(sessionId), `${line} ${process.pid}\n`);
const recorded = (sessionId: string, prefix: string) =>
  existsSync(logFile(sessionId))
    ? readFileSync(logFile(sessionId), 'utf8')
        .split('\n')
        .filter((line) => line.startsWith(prefix)).length
    : 0;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

function toolsFor(sessionId: string) {
  const slowTool = (name: string, replay: 'never' | 'safe', ms: number, extra: { requiresApproval?: boolean } = {}) =>
    defineTool({
      name,
      description: `${name} (${replay})`,
      parameters: z.object({ value: z.string() }),
      replay,
      ...extra,
      execute: async ({ value }, ctx) => {
        record(sessionId, `tool-start ${ctx.toolCallId} ${ctx.idempotencyKey}`);
        await ctx.update({ step: 'begun' });
        await sleep(ms, ctx.signal);
        record(sessionId, `tool-end ${ctx.toolCallId}${ctx.signal.aborted ? ' aborted' : ''}`);
        return `${name} ${value}`;
      },
    });
  // For the benchmark: tools that return at once, one per replay rule.
  const instant = (name: string, replay: 'never' | 'safe') =>
    defineTool({
      name,
      description: `${name} (${replay})`,
      parameters: z.object({ value: z.string() }),
      replay,
      execute: ({ value }) => `${name} ${value}`,
    });
  // Values JSON cannot hold: a refused progress update (caught, then not), a schema's output.
  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic.self = cyclic;
  const values = [
    defineTool({
      name: 'progress',
      description: 'Reports a BigInt (refused, caught), then JSON.',
      parameters: z.object({}),
      replay: 'safe',
      execute: async (_args, ctx) => {
        const refused = await ctx.update({ bytes: 10n }).then(
          () => 'accepted',
          (error: unknown) => (error instanceof Error ? error.message : String(error)),
        );
        await ctx.update({ done: 1 });
        return `refused: ${refused}`;
      },
    }),
    defineTool({
      name: 'tally',
      description: 'Reports a cycle and lets the refusal fail the call.',
      parameters: z.object({}),
      execute: async (_args, ctx) => {
        await ctx.update(cyclic);
        return 'never reached';
      },
    }),
    defineTool({
      name: 'ledger',
      description: 'Books an amount its schema makes a BigInt.',
      parameters: z.object({ amount: z.string().transform((text) => BigInt(text)) }),
      execute: ({ amount }) => `booked ${typeof amount} ${String(amount)}`,
    }),
  ];
  return [
    ...values,
    instant('instantSafe', 'safe'),
    instant('instantNever', 'never'),
    slowTool('write_log', 'never', 800),
    slowTool('fetch', 'safe', 800),
    slowTool('deploy', 'never', 10, { requiresApproval: true }),
    slowTool('wait', 'never', 5_000),
    slowTool('work', 'safe', 600),
  ];
}

const assistants = (messages: readonly { role: string }[]) => messages.filter((m) => m.role === 'assistant').length;
const lastUser = (messages: readonly { role: string; content?: unknown }[]) => {
  const user = [...messages].reverse().find((m) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : '';
};

/** The scripted reply for a request of the scenario; `slow` marks the replies whose stream is held open. */
function scriptFor(
  sessionId: string,
  messages: readonly { role: string; content?: unknown }[],
): { entry: ScriptEntry; slow: boolean } {
  const done = assistants(messages);
  const call = (id: string, name: string) => ({ id, name, arguments: { value: id } });
  if (sessionId.startsWith('crash')) {
    if (done === 0)
      return {
        entry: {
          text: 'Writing the log and fetching the page.',
          toolCalls: [call('w1', 'write_log'), call('f1', 'fetch')],
        },
        slow: true,
      };
    if (done === 1) {
      // The first attempt of this turn fails with a rate limit (its reply is journaled too).
      if (recorded(sessionId, 'model 1 ') === 1)
        return { entry: { text: 'partial', error: { kind: 'rateLimit', retryAfterMs: 1_500 } }, slow: false };
      return { entry: { text: 'Deploying.', toolCalls: [call('d1', 'deploy')] }, slow: false };
    }
    return { entry: { text: 'All done.' }, slow: false };
  }
  if (sessionId.startsWith('values')) {
    if (done > 0) return { entry: { text: 'Reported.' }, slow: false };
    const toolCalls = [
      { id: 'v1', name: 'progress', arguments: {} },
      { id: 'v2', name: 'tally', arguments: {} },
      { id: 'v3', name: 'ledger', arguments: { amount: '5' } },
    ];
    return { entry: { text: 'Reporting.', toolCalls }, slow: false };
  }
  if (sessionId.startsWith('steer')) {
    if (done === 0) return { entry: { text: 'Waiting.', toolCalls: [call('s1', 'wait')] }, slow: false };
    return { entry: { text: `Heard: ${lastUser(messages)}` }, slow: false };
  }
  if (sessionId.startsWith('approve')) {
    if (done === 0) return { entry: { text: 'Deploying.', toolCalls: [call('a1', 'deploy')] }, slow: false };
    return { entry: { text: 'Deployed.' }, slow: false };
  }
  if (sessionId.startsWith('abort')) {
    if (lastUser(messages) === 'again') return { entry: { text: 'Continuing after the abort.' }, slow: false };
    return { entry: { text: 'Waiting long.', toolCalls: [call(`x${done}`, 'wait')] }, slow: false };
  }
  if (sessionId.startsWith('bench')) {
    // bench-turn-…: one text turn; bench-safe-… / bench-never-…: a turn of 20 tool calls, then text;
    // bench-turns-…: ten turns of one 'safe' call each, then text.
    const [, workload] = sessionId.split('-');
    const calls =
      workload === 'turns'
        ? done < 10
          ? 1
          : 0
        : workload === 'safe' || workload === 'never'
          ? done === 0
            ? 20
            : 0
          : 0;
    const tool = workload === 'never' ? 'instantNever' : 'instantSafe';
    if (calls === 0) return { entry: { text: 'ok' }, slow: false };
    return {
      entry: { text: 'Calling.', toolCalls: Array.from({ length: calls }, (_, i) => call(`t${done}_${i}`, tool)) },
      slow: false,
    };
  }
  if (sessionId.startsWith('load')) {
    if (done === 0)
      return { entry: { text: 'Working.', toolCalls: [call('k1', 'work'), call('k2', 'work')] }, slow: false };
    return { entry: { text: 'Finished.' }, slow: false };
  }
  return { entry: { text: `Echo: ${lastUser(messages)}` }, slow: false };
}

/** The scripted model, counting calls in the session's file; a slow reply stalls after its first delta. */
function modelFor(sessionId: string): Model {
  let slow = false;
  const scripted = scriptedModel(
    (request) => {
      const chosen = scriptFor(sessionId, request.messages);
      slow = chosen.slow;
      return chosen.entry;
    },
    { recordRequests: false },
  );
  return {
    name: scripted.name,
    async *stream(request, options) {
      if (!sessionId.startsWith('bench')) record(sessionId, `model ${assistants(request.messages)}`);
      let first = true;
      for await (const event of scripted.stream(request, options)) {
        yield event;
        if (first && slow) {
          record(sessionId, `streaming ${assistants(request.messages)}`);
          await sleep(1_000, options.signal);
        }
        first = false;
      }
    },
  };
}

export function testAgent(sessionId: string): AgentOptions {
  return { model: modelFor(sessionId), tools: toolsFor(sessionId), retry: { maxAttempts: 3, baseDelayMs: 100 } };
}

if (port) {
  // Retries of an invocation whose worker died come quickly (the tests restart workers at once).
  const agent = agentObject({
    name: 'Agent',
    agent: testAgent,
    options: { retryPolicy: { initialInterval: 50, maxInterval: 250, exponentiationFactor: 1.5 } },
  });
  await restate.endpoint().bind(agent).listen(port);
  console.log(`listening ${port}`);
}
