import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type AgentEvent, type AgentObserver, type RunResult } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { settle } from '../support/harness.js';

export const SESSION_ID = 'session-otel';
export const SYSTEM_PROMPT = 'You are a terse release assistant.';

/** Resolves once the run's log has an event matching `predicate` (the run moves on real macrotasks). */
async function until(
  events: readonly AgentEvent[],
  predicate: (event: AgentEvent) => boolean,
  what: string,
): Promise<void> {
  for (let i = 0; i < 200 && !events.some(predicate); i++) await settle(1);
  if (!events.some(predicate)) throw new Error(`the session never reached: ${what}`);
}

/**
 * The session the span-tree tests trace (one run, on the simulated clock):
 * turn 0 — alpha is rate-limited (retry after 500 ms), then overloaded: retries are spent and beta
 * takes over; beta asks for `search` and `fetch` in parallel; a steering message arrives while
 * `fetch` runs and, after the grace period, interrupts it.
 * turn 1 — delivers the steering message; beta overflows its context (compaction, same turn), then
 * asks for `deploy`, which needs approval (approved) and runs until the run is aborted.
 */
export async function runTracedSession(
  otel: AgentObserver,
): Promise<{ result: RunResult; events: AgentEvent[]; runId: string }> {
  const clock = new SimulatedClock();
  const alpha = scriptedModel(
    [
      { text: 'thinking about it', error: { kind: 'rateLimit', retryAfterMs: 500, message: 'slow down' } },
      { error: { kind: 'overloaded' } },
    ],
    { name: 'alpha', provider: 'anthropic', clock },
  );
  const beta = scriptedModel(
    [
      {
        toolCalls: [
          { id: 't1', name: 'search', arguments: { q: 'release notes' } },
          { id: 't2', name: 'fetch', arguments: { url: 'https://example.test/notes' } },
        ],
        usage: { input: 20, output: 5 },
      },
      { error: { kind: 'contextOverflow', message: 'prompt is too long' } },
      {
        text: 'Deploying.',
        toolCalls: [{ id: 't3', name: 'deploy', arguments: { target: 'prod' } }],
        usage: { input: 30, output: 6, cacheRead: 12 },
      },
    ],
    { name: 'beta', clock },
  );
  const stallUntilAborted = (signal: AbortSignal) =>
    new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
  const tools = [
    defineTool({
      name: 'search',
      description: 'Searches the notes.',
      parameters: z.object({ q: z.string() }),
      execute: ({ q }) => `found: ${q}`,
    }),
    defineTool({
      name: 'fetch',
      description: 'Fetches a URL.',
      parameters: z.object({ url: z.string() }),
      execute: (_args, { signal }) => stallUntilAborted(signal),
    }),
    defineTool({
      name: 'deploy',
      description: 'Deploys a release.',
      parameters: z.object({ target: z.string() }),
      requiresApproval: true,
      execute: (_args, { signal }) => stallUntilAborted(signal),
    }),
  ];
  const agent = createAgent({
    model: alpha,
    fallbackModels: [beta],
    systemPrompt: SYSTEM_PROMPT,
    tools,
    approval: () => ({ approved: true }),
    retry: { maxAttempts: 2, jitter: false },
    steeringGraceMs: 100,
    clock,
    store: memoryStore(),
    sessionId: SESSION_ID,
    otel,
  });
  await agent.ready;
  const events: AgentEvent[] = [];
  const run = agent.prompt('Publish the release notes.');
  run.events.subscribe((event) => events.push(event));

  await until(events, (e) => e.type === 'retry', 'the rate-limit retry');
  clock.increment(500);
  await until(events, (e) => e.type === 'toolExecutionStart' && e.toolName === 'fetch', 'fetch running');
  await until(events, (e) => e.type === 'toolExecutionEnd' && e.toolName === 'search', 'search done');
  const receipt = agent.steer('Only the security section, please.');
  await settle();
  clock.increment(100);
  await until(events, (e) => e.type === 'toolExecutionStart' && e.toolName === 'deploy', 'deploy running');
  agent.abort('user cancelled');
  const result = await run.result;
  await agent.flush();
  if ((await receipt).status !== 'delivered') throw new Error('the steering message was not delivered');
  return { result, events, runId: run.runId };
}
