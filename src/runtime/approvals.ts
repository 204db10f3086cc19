import { fromCallback, type EventObject } from 'xstate';
import type { ApprovalVerdict, PreparedCall } from '../../machines/turn.types.js';
import type { ToolCallBlock } from '../domain/messages.js';
import type { ApprovalDecision } from '../policies/types.js';
import { checkApprovalDecision } from '../policies/verdicts.js';
import type { ToolRegistry } from '../tools/registry.js';
import { errorMessage } from './policy-runner.js';
import { runDeps, type RunDeps } from './run-registry.js';
import { ABORTED, raceAbort } from './timers.js';
import { validateToolCall } from './tool-phases.js';

/**
 * Approval through the handler, isolated: a throwing or rejecting handler, or one that returns
 * anything but a decision, is a `failed` verdict (an error result, reported as a policyError).
 * Without a handler (and no store to wait on) each call fails with a clear message. Every call of
 * the batch that needs approval is asked at once: the handler is called for each, in call order,
 * without waiting for the one before (a UI shows them together, as a stored session's
 * `pendingApprovals()` lists them), and each verdict goes to the turn when it comes. Leaving the
 * state (abort, steering) signals every handler still deciding.
 */
export function createApprovalAsker() {
  return fromCallback<EventObject, { turnIndex: number; calls: PreparedCall[] }>(({ input, sendBack, system }) => {
    const run = runDeps(system);
    // Aborted when the turn leaves the requests (abort, steering): the handlers are signalled.
    const controller = new AbortController();
    run.boundary.afterStep(() => {
      // A stored session with no handler waits for resolveApproval: parked once the wait is stored.
      if (durable(run)) queueMicrotask(() => run.parkIfWaiting());
      for (const { call } of input.calls) {
        // A subscriber of an earlier request may have ended the asking (abort, steering): no request after it.
        if (controller.signal.aborted) return;
        sendBack({ type: 'APPROVAL_REQUESTED', toolCallId: call.id });
        // A stored session with no handler waits for resolveApproval.
        if (controller.signal.aborted || durable(run)) continue;
        void run.awaitUser(askHandler(run, call, input.turnIndex, controller.signal)).then((decision) => {
          if (controller.signal.aborted) return;
          if ('failed' in decision) run.reportPolicyError('approval', new Error(decision.failed), input.turnIndex);
          const verdict: ApprovalVerdict =
            'failed' in decision
              ? { kind: 'failed', message: decision.failed }
              : verdictOf(run.agent.registry, call, decision);
          sendBack({ type: 'APPROVAL_VERDICT', toolCallId: call.id, toolName: call.name, verdict });
        });
      }
    });
    return () => controller.abort();
  });
}

/** A stored session with no handler: `resolveApproval` answers, possibly after a restart. */
function durable(run: RunDeps): boolean {
  return !run.agent.options.approval && run.agent.persister !== null;
}

/** A checked decision as the turn takes it: approved arguments must pass the tool's schema. */
export function verdictOf(
  registry: ToolRegistry,
  call: Omit<ToolCallBlock, 'type'>,
  decision: ApprovalDecision,
): ApprovalVerdict {
  if (!decision.approved) return { kind: 'denied', reason: decision.reason ?? 'the user declined this tool call' };
  if (!('arguments' in decision) || !decision.arguments) return { kind: 'approved' };
  // approveWith(arguments): the call runs only with arguments its schema accepts.
  const outcome = validateToolCall(registry, { ...call, arguments: decision.arguments });
  if (outcome.ok) return { kind: 'approvedWith', arguments: outcome.arguments };
  return { kind: 'failed', message: `the approved arguments are invalid: ${outcome.message}` };
}

async function askHandler(
  run: RunDeps,
  call: ToolCallBlock,
  turnIndex: number,
  signal: AbortSignal,
): Promise<ApprovalDecision | { failed: string }> {
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
