import { fromPromise } from 'xstate';
import type { ModelReply, TurnAttempt } from '../../machines/turn.types.js';
import { modelError } from '../domain/errors.js';
import type { MessageDelta } from '../domain/events.js';
import type { Message } from '../domain/messages.js';
import { StreamAccumulator } from '../model/accumulator.js';
import type { ModelStreamEvent } from '../model/port.js';
import { errorMessage } from './policy-runner.js';
import { runOf } from './run-registry.js';
import type { ContextView } from './history.js';
import type { RunSession } from './run-session.js';

/**
 * The ASSISTANT state's model call. The stream's deltas are buffered for the attempt: they are
 * published only when the turn knows the attempt is final, so a retried attempt's partial text
 * never reaches the event stream. An abort ends the call at once, even if the provider stalls.
 */
export function createCallModel() {
  return fromPromise<ModelReply, { turnIndex: number; attempt: TurnAttempt }>(async ({ input, system }) => {
    // On a turn's initial macrostep XState starts invoked actors before it runs the deferred
    // actions (turnStart, commitTurnInput); one microtask lets them land before history is read.
    await Promise.resolve();
    const run = runOf(system);
    run.turn.deltas = [];
    run.turn.messageOpen = false;
    const view = await requestMessages(run);
    const model = run.model;
    if (run.signal.aborted) return { called: false, published: false, message: emptyErrorMessage(run, 'aborted'), error: modelError('aborted', 'aborted'), invalidCalls: [] };
    // The event and the request share one view of the history: the exact context sent, not a copy per call.
    const messages = view.messages() as Message[];
    const provider = model.provider !== undefined ? { provider: model.provider } : {};
    run.emit({ type: 'beforeModelCall', turnIndex: input.turnIndex, model: model.name, ...provider, messages }, view);
    const reply = { ...(await attemptReply(run, messages, input.turnIndex)), published: run.turn.messageOpen };
    run.ledger.recordUsage(reply.message.usage, model.pricing);
    if (reply.error && reply.error.kind !== 'aborted') run.ledger.recordFailure(reply.error.kind);
    return reply;
  });
}

async function requestMessages(run: RunSession): Promise<ContextView> {
  const { agent, turn } = run;
  const log = agent.log;
  // After an overflow recovery every re-run of the turn (a rate-limit retry too) uses the compacted view.
  if (turn.overflowView) return log.viewOf(turn.overflowView);
  if (!agent.options.context) return log.view();
  const history = agent.history;
  const request = { overflow: false, systemPrompt: agent.options.systemPrompt, tools: agent.registry.specs() };
  const prepared = await run.awaitUser(agent.guard.prepare(history, request));
  if (!prepared.ok) {
    // Isolated like a policy: a throwing transform is reported and counts as no transform.
    run.reportPolicyError('contextTransform', new Error(prepared.error.message));
    return log.view();
  }
  // Proactive compaction is visible in beforeModelCall.messages; contextCompacted marks overflow recovery.
  return prepared.messages === history ? log.view() : log.viewOf(prepared.messages);
}

function emptyErrorMessage(run: RunSession, text: string) {
  return { role: 'assistant' as const, content: [], stopReason: 'error' as const, model: run.model.name, errorMessage: text };
}

/**
 * Streams the reply, or with a durable host runs the attempt as one journaled step: its deltas are
 * recorded and published once the step is done, so a replay publishes exactly what the first run did.
 */
type Reply = Omit<ModelReply, 'published'>;

async function attemptReply(run: RunSession, messages: Message[], turnIndex: number): Promise<Reply> {
  const host = run.agent.host;
  if (!host) return streamReply(run, messages, (delta, modelName) => run.streamDelta(delta, modelName));
  const model = run.model;
  const key = `model ${turnIndex}:${run.nextSeq}`;
  const recorded = await host.modelAttempt(key, async () => {
    const deltas: MessageDelta[] = [];
    const reply = await streamReply(run, messages, (delta) => deltas.push(delta));
    return { reply, deltas };
  });
  for (const delta of recorded.deltas) run.streamDelta(delta, model.name);
  return recorded.reply;
}

type OnDelta = (delta: MessageDelta, modelName: string) => void;

async function streamReply(run: RunSession, messages: Message[], onDelta: OnDelta): Promise<Reply> {
  const { agent, signal } = run;
  const model = run.model;
  const accumulator = new StreamAccumulator(model.name);
  const aborted = (): Omit<ModelReply, 'published'> => ({ called: true, message: accumulator.abort(), error: modelError('aborted', 'aborted'), invalidCalls: [] });
  if (signal.aborted) return aborted();

  // A provider that ignores the signal must not hold the turn: the abort wins the race.
  let onAbort: () => void = () => {};
  const abortWins = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  let iterator: AsyncIterator<ModelStreamEvent> | undefined;
  try {
    iterator = model.stream({ systemPrompt: agent.options.systemPrompt, messages, tools: agent.registry.specs() }, { signal })[Symbol.asyncIterator]();
    for (;;) {
      const next = await Promise.race([iterator.next(), abortWins]);
      if (next === 'aborted') {
        void Promise.resolve(iterator.return?.()).catch(() => {});
        return aborted();
      }
      if (next.done) break;
      for (const delta of accumulator.push(next.value)) onDelta(delta, model.name);
      if (accumulator.terminal) break;
    }
  } catch (error) {
    if (signal.aborted) return aborted();
    accumulator.push({ type: 'error', error: modelError('unknown', `model stream failed: ${errorMessage(error)}`) });
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  if (signal.aborted) return aborted();
  const message = accumulator.finish();
  const terminal = accumulator.terminal;
  const error = terminal?.kind === 'error' ? terminal.error : null;
  if (error?.kind === 'aborted') return { called: true, message, error, invalidCalls: [] };
  return {
    called: true,
    message,
    error,
    invalidCalls: accumulator.invalidToolCalls.map((call) => ({ id: call.id, reason: call.reason, rawArguments: call.rawArguments })),
  };
}
