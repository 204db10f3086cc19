import { fromPromise } from 'xstate';
import type { ResponseOutput } from '../../machines/turn.types.js';
import {
  toMessage,
  toolCallsOf,
  type AssistantMessage,
  type Message,
  type ToolResultMessage,
} from '../domain/messages.js';
import { checkPostTurnVerdict, checkVerdict } from '../policies/verdicts.js';
import type { SessionHistory } from './history.js';
import type { PolicySlot } from '../domain/events.js';
import { runIsolated } from './policy-runner.js';
import { runDeps, type RunDeps } from './run-registry.js';
import { withRunSignal } from './timers.js';

/** Pre-turn / post-loop: Stop ends the session, Inject adds messages, Continue does nothing. */
export async function runLoopPolicies(
  run: RunDeps,
  slot: 'preTurn' | 'postLoop',
  newMessages: readonly Message[],
  turnIndex: number,
  signal: AbortSignal,
): Promise<{ stopped: boolean; injected: Message[] }> {
  const policies = run.agent.options.policies?.[slot] ?? [];
  const injected: Message[] = [];
  const messages = run.agent.history.slice();
  for (const policy of policies) {
    // After an abort no policy is asked anything more.
    if (signal.aborted || run.signal.aborted) break;
    const ask = () => policy({ messages, newMessages, turnIndex, counters: run.countersSnapshot() });
    const report = (s: PolicySlot, e: unknown) => run.reportPolicyError(s, e);
    const verdict = await run.awaitUser(runIsolated(slot, ask, checkVerdict, report, signal));
    if (signal.aborted || run.signal.aborted) break;
    if (verdict?.verdict === 'stop') return { stopped: true, injected };
    if (verdict?.verdict === 'inject') injected.push(...verdict.messages.map(toMessage));
  }
  return { stopped: false, injected };
}

export function createPreTurnRunner() {
  type Input = { turnIndex: number; newMessages: Message[] };
  return fromPromise<{ stopped: boolean; injected: Message[] }, Input>(({ input, system, signal }) =>
    runLoopPolicies(
      runDeps(system),
      'preTurn',
      input.newMessages,
      input.turnIndex,
      withRunSignal(runDeps(system), signal),
    ),
  );
}

export function createPostLoopRunner() {
  return fromPromise<{ stopped: boolean; injected: Message[] }, { turnIndex: number }>(({ input, system, signal }) =>
    runLoopPolicies(runDeps(system), 'postLoop', [], input.turnIndex, withRunSignal(runDeps(system), signal)),
  );
}

/**
 * Post-turn policies see the committed snapshot, and run only once it is stored: a crash inside a
 * slow policy (even one that blocks the process) never loses the turn's results. A replacement
 * assistant message is used only if its tool-call blocks are exactly the original ones (parity
 * with the committed results).
 */
export function createPostTurnRunner() {
  type Input = { turnIndex: number; assistant: AssistantMessage | null; toolResults: ToolResultMessage[] };
  return fromPromise<ResponseOutput, Input>(async ({ input, system, signal }) => {
    const run = runDeps(system);
    await new Promise<void>((resolve) => run.boundary.afterStep(resolve));
    let assistant = input.assistant;
    const injected: Message[] = [];
    let stopped = false;
    for (const policy of run.agent.options.policies?.postTurn ?? []) {
      if (signal.aborted || run.signal.aborted) break;
      const messages = run.agent.history.slice();
      const { toolResults, turnIndex } = input;
      const ask = () => policy({ messages, assistant, toolResults, turnIndex, counters: run.countersSnapshot() });
      const report = (s: PolicySlot, e: unknown) => run.reportPolicyError(s, e, turnIndex);
      const verdict = await run.awaitUser(
        runIsolated('postTurn', ask, checkPostTurnVerdict, report, withRunSignal(run, signal)),
      );
      // An abort while the policy ran: its verdict no longer applies (the history is final).
      if (signal.aborted || run.signal.aborted) break;
      if (!verdict) continue;
      if (verdict.verdict === 'stop') stopped = true;
      if (verdict.verdict === 'inject') injected.push(...verdict.messages.map(toMessage));
      if (verdict.verdict === 'replace' && assistant) {
        if (sameToolCalls(assistant, verdict.assistant)) {
          replaceInHistory(run.agent.log, assistant, verdict.assistant);
          assistant = verdict.assistant;
        } else {
          const problem = 'replacement ignored: it changes the tool-call blocks of the committed assistant message';
          run.reportPolicyError('postTurn', new Error(problem), input.turnIndex);
        }
      }
      if (stopped) break;
    }
    return { stopped, injected, assistant: assistant === input.assistant ? null : assistant };
  });
}

function sameToolCalls(original: AssistantMessage, replacement: AssistantMessage): boolean {
  if (replacement?.role !== 'assistant' || !Array.isArray(replacement.content)) return false;
  const a = toolCallsOf(original);
  const b = toolCallsOf(replacement);
  return (
    a.length === b.length &&
    a.every(
      (call, i) =>
        call.id === b[i]?.id &&
        call.name === b[i]?.name &&
        JSON.stringify(call.arguments) === JSON.stringify(b[i]?.arguments),
    )
  );
}

function replaceInHistory(log: SessionHistory, original: AssistantMessage, replacement: AssistantMessage): void {
  const index = log.messages.lastIndexOf(original);
  if (index >= 0) log.replace(index, replacement);
}
