import { fromPromise } from 'xstate';
import { errorResult } from '../../machines/tool-results.js';
import type { ApprovalOutput, PreparedCall, ResultsByPosition } from '../../machines/turn.types.js';
import type { ToolCallBlock } from '../domain/messages.js';
import type { ApprovalDecision } from '../policies/types.js';
import { checkApprovalDecision } from '../policies/verdicts.js';
import { errorMessage } from './policy-runner.js';
import { runOf } from './run-registry.js';
import type { RunSession } from './run-session.js';
import { ABORTED, raceAbort } from './timers.js';
import { validateToolCall } from './tool-phases.js';

type Decision = ApprovalDecision | { failed: string };

/**
 * Approval, isolated: a throwing or rejecting handler resolves the call as denied with an error
 * result. Without a handler, an agent with a store waits durably for `resolveApproval` (the process
 * may exit meanwhile). `approveWith(arguments)` marks the call for a second pre-dispatch pass.
 * Stopping the actor (abort) resolves the pending request as denied.
 */
export function createApprovalRunner() {
  return fromPromise<ApprovalOutput, { turnIndex: number; prepared: PreparedCall[]; results: ResultsByPosition }>(async ({ input, signal, system }) => {
    const run = runOf(system);
    const results = new Map(input.results);
    const prepared: PreparedCall[] = [];
    let rewritten = false;
    for (const entry of input.prepared) {
      if (entry.approved) {
        prepared.push(entry);
        continue;
      }
      // After an abort, or steering that interrupts (its event may still be queued), nobody is asked any more.
      if (signal.aborted || run.signal.aborted || run.steeringInterrupts) {
        return { prepared, results, rewritten: false };
      }
      const { call } = entry;
      const base = { turnIndex: input.turnIndex, toolCallId: call.id, toolName: call.name };
      const durableDecision = run.agent.options.approval ? null : awaitDurableDecision(run, call);
      let settled = false;
      const resolveAs = (approved: boolean) => {
        if (settled) return;
        settled = true;
        if (approved) run.turn.approved.add(call.id);
        run.emit({ type: 'toolApprovalResolved', ...base, approved });
      };
      // Installed before the request is published: an abort from a subscriber of it resolves it.
      const onAbort = () => resolveAs(false);
      // Withdrawn by the turn (abort, steering): resolved as denied, and a durable request is no longer pending.
      run.turn.denyPendingApproval = () => {
        // Cleared first: the checkpoint taken on toolApprovalResolved must not store it as pending.
        const durable = run.turn.pendingApproval;
        run.turn.pendingApproval = null;
        resolveAs(false);
        durable?.decide({ approved: false, reason: 'withdrawn' });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      // A request published before a restart is not published twice.
      if (!run.turn.requested.has(call.id)) {
        run.turn.requested.add(call.id);
        run.emit({ type: 'toolApprovalRequested', ...base, arguments: call.arguments });
      }
      let decision: Decision;
      try {
        if (signal.aborted || run.signal.aborted) {
          // Aborted by a subscriber of the request itself: resolve it here, inside the turn.
          resolveAs(false);
          return { prepared, results, rewritten: false };
        }
        decision = await (durableDecision ?? run.awaitUser(askHandler(run, call, input.turnIndex, signal)));
      } finally {
        signal.removeEventListener('abort', onAbort);
        run.turn.denyPendingApproval = null;
        run.turn.pendingApproval = null;
      }
      if (signal.aborted) return { prepared, results, rewritten: false };
      if ('failed' in decision) {
        run.reportPolicyError('approval', new Error(decision.failed));
        resolveAs(false);
        run.ledger.increment('toolCallsRejected');
        results.set(entry.position, errorResult(call, `approval failed: ${decision.failed}`));
      } else if (!decision.approved) {
        resolveAs(false);
        run.ledger.increment('toolCallsRejected');
        results.set(entry.position, errorResult(call, `rejected: ${decision.reason ?? 'the user declined this tool call'}`));
      } else if ('arguments' in decision && decision.arguments) {
        // approveWith(arguments): the call runs only with arguments its schema accepts.
        const outcome = validateToolCall(run.agent.registry, { ...call, arguments: decision.arguments });
        if (outcome.ok) {
          resolveAs(true);
          rewritten = true;
          prepared.push({ ...entry, approved: true, call: { ...call, arguments: outcome.arguments }, cleared: false });
        } else {
          resolveAs(false);
          run.ledger.increment('toolCallsRejected');
          results.set(entry.position, errorResult(call, `approval failed: the approved arguments are invalid: ${outcome.message}`));
        }
      } else {
        resolveAs(true);
        prepared.push({ ...entry, approved: true });
      }
    }
    return { prepared, results, rewritten };
  });
}

async function askHandler(run: RunSession, call: ToolCallBlock, turnIndex: number, signal: AbortSignal): Promise<Decision> {
  const handler = run.agent.options.approval;
  try {
    if (!handler) throw new Error('approval required but no approval handler is configured');
    // Raced with the signal: a handler that never settles cannot hold an aborted or steered turn.
    const request = { toolCallId: call.id, toolName: call.name, arguments: structuredClone(call.arguments), turnIndex };
    const value = await raceAbort(handler(request, { signal }), signal);
    if (value === ABORTED) return { failed: 'aborted' };
    // Anything but one of the decision shapes is a denial: `{ approved: 'false' }` never runs the tool.
    const decision = checkApprovalDecision(value);
    if (decision.ok) return decision.value;
    return { failed: `the approval handler returned an invalid decision: ${decision.problem}` };
  } catch (error) {
    return { failed: errorMessage(error) };
  }
}

/**
 * A durable approval: recorded in the checkpoint (with the session version to quote back) and
 * answered by `agent.resolveApproval`, possibly in another process after a restart. Without a
 * store there is nobody to answer: the call fails with a clear message.
 */
function awaitDurableDecision(run: RunSession, call: ToolCallBlock): Promise<Decision> | null {
  const persister = run.agent.persister;
  if (!persister) return null;
  const restored = run.turn.pendingApproval?.toolCallId === call.id ? run.turn.pendingApproval : null;
  if (restored?.early) return Promise.resolve(restored.early);
  return new Promise<Decision>((resolve) => {
    run.turn.pendingApproval = {
      toolCallId: call.id,
      toolName: call.name,
      arguments: call.arguments,
      // The request is checkpointed in the next step; its version is what resolveApproval must quote.
      version: restored?.version ?? persister.version + 1,
      early: null,
      decide: resolve,
    };
  });
}
