import { fromPromise } from 'xstate';
import type { ModelReply, TurnInput } from '../../machines/turn.types.js';
import { modelError, type ModelError } from '../domain/errors.js';
import type { MessageDelta } from '../domain/events.js';
import { toolCallsOf, type AssistantMessage, type Message } from '../domain/messages.js';
import { StreamAccumulator } from '../model/accumulator.js';
import type { Model, ModelRequest } from '../model/port.js';
import { preview, readStreamEvent, type StreamEventSink } from '../model/stream-events.js';
import { errorMessage } from './policy-runner.js';
import { runDeps, type RunDeps } from './run-registry.js';
import { prepareCalls } from './tool-phases.js';
import type { ContextView } from './history.js';
import {
  ABORTED,
  isThenable,
  nextMacrotask,
  onAbort,
  raceAbort,
  systemClock,
  type Aborted,
  type RuntimeClock,
} from './timers.js';

type Reply = Omit<ModelReply, 'published'>;
type CallInput = Pick<TurnInput, 'turnIndex' | 'attempt' | 'overflowView' | 'modelIndex'>;

/**
 * The ASSISTANT state's model call. The stream's deltas travel with the reply: they are published
 * only when the turn knows the attempt is final, so a retried attempt's partial text never reaches
 * the event stream ('live' streaming publishes them as they arrive). An abort ends the call at
 * once, even if the provider stalls. The closing attempt of a turn a deferred failure left open
 * calls no model: its reply is an empty aborted message.
 */
export function createCallModel() {
  return fromPromise<ModelReply, CallInput>(async ({ input, system }) => {
    const run = runDeps(system);
    const model = run.modelAt(input.modelIndex);
    if (input.attempt === 'closing') return closingReply(model.name);
    // Fairness: one macrotask per model call, so a synchronous model and synchronous tools never
    // starve timers and I/O.
    await run.awaitUser(nextMacrotask(run.signal));
    run.live = null;
    const view = await requestMessages(run, input);
    if (view === ABORTED || run.signal.aborted) {
      return {
        called: false,
        published: false,
        message: emptyErrorMessage(model.name, 'aborted'),
        deltas: [],
        error: modelError('aborted', run.abortReason),
        invalidCalls: [],
      };
    }
    const provider = model.provider !== undefined ? { provider: model.provider } : {};
    // The event and the request share one view of the history: the exact context sent, not a copy per call.
    const messages = view.messages() as Message[];
    run.emit({ type: 'beforeModelCall', turnIndex: input.turnIndex, model: model.name, ...provider, messages }, view);
    const reply = await attemptReply(run, messages, model, input.turnIndex);
    run.ledger.recordUsage(reply.message.usage, model.pricing);
    if (reply.error && reply.error.kind !== 'aborted') run.ledger.recordFailure(reply.error.kind);
    const done: ModelReply = { ...reply, published: liveOpen(run) };
    // The reply's tool calls are checked against the registry here, where the reply is read.
    if (!reply.error && toolCallsOf(reply.message).length > 0) {
      done.prepared = prepareCalls(run, { turnIndex: input.turnIndex, reply: done, decided: [], approved: [] });
    }
    return done;
  });
}

/** Live streaming published this attempt's messageStart (the stream reader set `run.live`). */
function liveOpen(run: RunDeps): boolean {
  return run.live?.open ?? false;
}

function closingReply(modelName: string): ModelReply {
  const message: AssistantMessage = { role: 'assistant', content: [], stopReason: 'aborted', model: modelName };
  return { called: true, published: false, message, deltas: [], error: null, invalidCalls: [] };
}

async function requestMessages(run: RunDeps, input: CallInput): Promise<ContextView | Aborted> {
  const { agent } = run;
  const log = agent.log;
  // After an overflow recovery every re-run of the turn (a rate-limit retry too) uses the compacted view.
  if (input.overflowView) return log.viewOf(input.overflowView);
  if (!agent.options.context) return log.view();
  const history = agent.history;
  const request = { overflow: false, systemPrompt: agent.options.systemPrompt, tools: agent.registry.specs() };
  const prepared = await run.awaitUser(raceAbort(agent.guard.prepare(history, request), run.signal));
  if (prepared === ABORTED) return ABORTED;
  if (!prepared.ok) {
    // Isolated like a policy: a throwing transform is reported and counts as no transform.
    run.reportPolicyError('contextTransform', new Error(prepared.error.message), input.turnIndex);
    return log.view();
  }
  if (prepared.transformRejected) run.reportTransformRejection(prepared.transformRejected, input.turnIndex);
  // Proactive compaction is visible in beforeModelCall.messages; contextCompacted marks overflow recovery.
  return prepared.messages === history ? log.view() : log.viewOf(prepared.messages);
}

/**
 * Streams the reply, or with a durable host runs the attempt as one journaled step: its deltas are
 * recorded and published once the step is done, so a replay publishes exactly what the first run did.
 * Inside the step the idle timeout is a real timer (the engine's timers are not for use in a step).
 */
async function attemptReply(run: RunDeps, messages: Message[], model: Model, turnIndex: number): Promise<Reply> {
  const host = run.agent.host;
  const live = run.agent.options.streaming === 'live';
  if (!host) {
    const deltas: MessageDelta[] = [];
    const onDelta = live
      ? (delta: MessageDelta) => run.streamLiveDelta(delta, turnIndex, model.name)
      : (delta: MessageDelta) => void deltas.push(delta);
    return { ...(await streamReply(run, messages, model, { onDelta, clock: run.clock, track: true })), deltas };
  }
  const recorded = await host.modelAttempt(`model ${turnIndex}:${run.seqNow}`, async () => {
    const deltas: MessageDelta[] = [];
    const reply = await streamReply(run, messages, model, {
      onDelta: (delta) => void deltas.push(delta),
      clock: systemClock,
      track: false,
    });
    return { reply: { ...reply, deltas: [] }, deltas };
  });
  if (!live) return { ...recorded.reply, deltas: recorded.deltas };
  for (const delta of recorded.deltas) run.streamLiveDelta(delta, turnIndex, model.name);
  return { ...recorded.reply, deltas: [] };
}

/** Where an attempt's deltas go, the clock of its idle timeout, and whether a live message tracks it. */
interface StreamSink {
  onDelta(delta: MessageDelta): void;
  clock: RuntimeClock;
  /** What a live message streamed so far (an internal error closes it with that content); a hosted attempt publishes nothing while it streams. */
  track: boolean;
}

function emptyErrorMessage(modelName: string, text: string): AssistantMessage {
  return { role: 'assistant', content: [], stopReason: 'error', model: modelName, errorMessage: text };
}

const invalidResponse = (problem: string): ModelError =>
  modelError('invalidResponse', `invalid model response: ${problem}`);

/** Why the model stream stopped being read before it ended by itself. */
type Interruption = 'aborted' | 'idle';

/**
 * Reads one attempt's stream through the model stream boundary: every event is checked as it
 * arrives, a wrong shape or a throw ends the attempt as `invalidResponse`, a silence of
 * `modelIdleMs` as `timeout`, and the iterator is closed on every exit path (after done/error too).
 */
async function streamReply(
  run: RunDeps,
  messages: Message[],
  model: Model,
  sink: StreamSink,
): Promise<Omit<Reply, 'deltas'>> {
  const { agent, signal } = run;
  const accumulator = new StreamAccumulator(model.name);
  if (sink.track) run.live = { open: false, accumulator };
  const aborted = () => ({
    called: true,
    message: accumulator.abort(),
    error: modelError('aborted', run.abortReason),
    invalidCalls: [],
  });
  if (signal.aborted) return aborted();

  // The attempt's own signal: the run's abort, or the idle timeout, cancels the provider's request.
  const attempt = new AbortController();
  const idleMs = agent.resolved.timeouts.modelIdleMs;
  const reader = new StreamReader(sink.clock, idleMs);
  const forgetAbort = onAbort(signal, () => {
    reader.interrupt('aborted');
    attempt.abort(signal.reason);
  });
  let iterator: StreamIterator | null = null;
  let finished = false;
  const request = { systemPrompt: agent.options.systemPrompt, messages, tools: agent.registry.specs() };
  try {
    iterator = await fromModel(() => openStream(model, request, attempt.signal));
    // Each item checked and folded in one pass: a text delta reaches the accumulator as its fields.
    const checked: StreamEventSink = {
      text: (kind, delta) => accumulator.pushText(kind, delta, sink.onDelta),
      event: (event) => accumulator.pushTo(event, sink.onDelta),
    };
    const end = await reader.read(iterator, (value) => {
      const problem = readStreamEvent(value, checked);
      if (problem !== null) {
        accumulator.fail(invalidResponse(problem));
        return false;
      }
      return !accumulator.terminal;
    });
    if (end === 'aborted') return aborted();
    if (end === 'idle') {
      attempt.abort(new Error(`model stream silent for ${idleMs} ms`));
      accumulator.fail(modelError('timeout', `model stream silent for ${idleMs} ms`));
    }
    finished = end === 'done';
  } catch (error) {
    // Only the model's failures are its invalid response; a throw of the runtime's own is an internal error.
    if (!(error instanceof StreamContractError)) throw error;
    if (signal.aborted) return aborted();
    accumulator.fail(invalidResponse(error.message));
  } finally {
    reader.close();
    forgetAbort();
    // Events after done/error are never read; closing runs a generator's `finally` (adapters release their HTTP body).
    if (!finished) closeIterator(iterator);
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
    invalidCalls: accumulator.invalidToolCalls.map((call) => ({
      id: call.id,
      reason: call.reason,
      rawArguments: call.rawArguments,
    })),
  };
}

interface StreamIterator {
  next(): unknown;
  return?(): unknown;
}

/** A broken promise of the Model port (not a provider failure): reported as invalidResponse. */
class StreamContractError extends Error {}

/** Runs a step that calls into the model; whatever it throws is the model's (a StreamContractError). */
async function fromModel<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw error instanceof StreamContractError
      ? error
      : new StreamContractError(`the stream threw: ${errorMessage(error)}`);
  }
}

/** Calls `model.stream` and gets its iterator; anything but an (async) iterable breaks the port's contract. */
function openStream(model: Model, request: ModelRequest, signal: AbortSignal): StreamIterator {
  let stream: unknown;
  try {
    stream = model.stream(request, { signal });
  } catch (error) {
    throw new StreamContractError(`model.stream() threw: ${errorMessage(error)}`);
  }
  // An `async stream()` returns a promise: never iterated, and its rejection must not go unhandled.
  if (isThenable(stream)) void Promise.resolve(stream).then(undefined, () => {});
  const factory = iteratorFactory(stream);
  if (!factory)
    throw new StreamContractError(
      `model.stream() returned ${isThenable(stream) ? 'a promise' : 'a non-iterable'}: ${preview(stream)}`,
    );
  const iterator: unknown = factory.call(stream);
  if (typeof iterator !== 'object' || iterator === null || typeof (iterator as StreamIterator).next !== 'function') {
    throw new StreamContractError('model.stream() returned an iterable whose iterator has no next()');
  }
  return iterator as StreamIterator;
}

function iteratorFactory(stream: unknown): (() => unknown) | null {
  if (typeof stream !== 'object' || stream === null) return null;
  const candidate =
    (stream as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] ??
    (stream as { [Symbol.iterator]?: unknown })[Symbol.iterator];
  return typeof candidate === 'function' ? (candidate as () => unknown) : null;
}

/** How reading a stream ended: its end, the reader's choice to stop, or an interruption. */
type ReadEnd = 'done' | 'stopped' | Interruption;

/**
 * Reads a stream's items, handing each to `onItem` as it arrives, until the stream ends, `onItem`
 * answers false, the run is aborted, or the model stays silent for `idleMs` on the agent's clock
 * (silence counts while an item is awaited; it restarts for every item). An item costs the
 * iterator's own promise and one reaction to it — no promise of the reader's, no async frame to
 * resume — and, on a clock that tells the time (XState's `SimulatedClock`, the system clock), the
 * attempt has one timer that re-arms itself for what is left of the current wait.
 */
class StreamReader {
  private interruption: Interruption | null = null;
  private iterator: StreamIterator | null = null;
  private onItem: ((value: unknown) => boolean) | null = null;
  private settle: ((end: ReadEnd) => void) | null = null;
  private fail: ((error: unknown) => void) | null = null;
  /** When the current wait began on the clock; null between waits. */
  private waitingSince: number | null = null;
  private timer: unknown = null;
  private readonly now: (() => number) | null;

  constructor(
    private readonly clock: RuntimeClock,
    private readonly idleMs: number,
  ) {
    this.now = typeof clock.now === 'function' ? () => (clock.now as () => number).call(clock) : null;
  }

  interrupt(why: Interruption): void {
    if (this.interruption) return;
    this.interruption = why;
    this.finish(why);
  }

  /** Reads until the end; a broken iterator (a throw, a rejection, a result that is no object) rejects with a StreamContractError. */
  read(iterator: StreamIterator, onItem: (value: unknown) => boolean): Promise<ReadEnd> {
    return new Promise<ReadEnd>((resolve, reject) => {
      this.iterator = iterator;
      this.onItem = onItem;
      this.settle = resolve;
      this.fail = reject;
      this.pull();
    });
  }

  close(): void {
    this.settle = this.fail = this.onItem = null;
    this.iterator = null;
    this.waitingSince = null;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private pull(): void {
    if (this.interruption) return this.finish(this.interruption);
    let step: unknown;
    try {
      step = (this.iterator as StreamIterator).next();
    } catch (error) {
      return this.reject(new StreamContractError(`the stream threw: ${errorMessage(error)}`));
    }
    this.startWait();
    // A plain object from a synchronous iterator waits a microtask too: a stream never runs the reader in a loop.
    void Promise.resolve(step).then(this.onResult, this.onRejected);
  }

  private readonly onResult = (result: unknown): void => {
    // Settled already (an interruption, a throw): a late item is not read.
    if (!this.settle) return;
    this.endWait();
    if (typeof result !== 'object' || result === null) {
      return this.reject(
        new StreamContractError(`the iterator's next() gave ${preview(result)} instead of { done, value }`),
      );
    }
    const { done, value } = result as { done?: unknown; value?: unknown };
    if (done === true) return this.finish('done');
    let more: boolean;
    try {
      more = (this.onItem as (value: unknown) => boolean)(value);
    } catch (error) {
      // The runtime's own throw (publishing a delta): it ends the read as it is, not as the model's fault.
      return this.reject(error);
    }
    if (more) this.pull();
    else this.finish('stopped');
  };

  private readonly onRejected = (error: unknown): void => {
    if (!this.settle) return;
    this.endWait();
    this.reject(new StreamContractError(`the stream threw: ${errorMessage(error)}`));
  };

  private finish(end: ReadEnd): void {
    const settle = this.settle;
    this.settle = this.fail = null;
    settle?.(end);
  }

  private reject(error: unknown): void {
    const fail = this.fail;
    this.settle = this.fail = null;
    fail?.(error);
  }

  private startWait(): void {
    if (!this.now) {
      this.timer = this.clock.setTimeout(this.onTimer, this.idleMs);
      return;
    }
    this.waitingSince = this.now();
    if (this.timer === null) this.timer = this.clock.setTimeout(this.onTimer, this.idleMs);
  }

  private endWait(): void {
    if (!this.now) {
      this.clock.clearTimeout(this.timer);
      this.timer = null;
      return;
    }
    this.waitingSince = null;
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    if (this.interruption) return;
    if (!this.now) return this.interrupt('idle');
    const since = this.waitingSince;
    const left = since === null ? this.idleMs : this.idleMs - (this.now() - since);
    if (left <= 0) return this.interrupt('idle');
    this.timer = this.clock.setTimeout(this.onTimer, left);
  };
}

function closeIterator(iterator: StreamIterator | null): void {
  if (!iterator) return;
  try {
    const closing = iterator.return?.();
    if (isThenable(closing)) void Promise.resolve(closing).then(undefined, () => {});
  } catch {
    // A hostile iterator whose return() throws: there is nothing left to release.
  }
}
