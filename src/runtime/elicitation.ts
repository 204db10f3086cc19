import { jsonProblem } from '../domain/json-problem.js';
import type { ToolCallBlock } from '../domain/messages.js';
import type { ApprovalDecision } from '../policies/types.js';
import { checkApprovalDecision } from '../policies/verdicts.js';
import type { PendingApproval } from '../store/types.js';
import type { ElicitationAnswer, ElicitationRequest } from '../tools/types.js';
import { errorMessage } from './policy-runner.js';
import { publishedArguments } from './published-arguments.js';
import { ABORTED, raceAbort } from './timers.js';
import type { RunDeps } from './run-registry.js';

/** A question of a running call waiting for `resolveApproval` (a store and no approval handler). */
export interface PendingElicitation {
  readonly pending: PendingApproval;
  answer(decision: ApprovalDecision): void;
}

export const NO_HANDLER = 'no approval handler is configured to answer it';
const ON_HOST = 'questions from a running tool are not supported on a durable-execution host';

/**
 * A running call's question (an MCP elicitation) through the agent's approval path, as an approval
 * is: the approval handler answers it; with a store and no handler it waits for `resolveApproval`
 * (listed by `pendingApprovals()` once its step is stored); with neither it is declined, saying
 * why. The call's signal cancels it. Published as `elicitationRequested` / `elicitationResolved`,
 * between the call's start and end. Never rejects.
 */
export async function elicit(
  run: RunDeps,
  call: Omit<ToolCallBlock, 'type'>,
  turnIndex: number,
  signal: AbortSignal,
  request: ElicitationRequest,
): Promise<ElicitationAnswer> {
  // Asked from inside a step (a tool that asks at once): published once that step is over.
  await new Promise<void>((resolve) => run.boundary.afterStep(resolve));
  const { id: toolCallId, name: toolName } = call;
  // A journaled tool step publishes only what it returns: a question inside it could not be replayed.
  if (run.agent.host) return { action: 'decline', reason: ON_HOST };
  if (signal.aborted || run.signal.aborted) return { action: 'cancel', reason: 'the tool call was cancelled' };
  // Published and stored as it is asked: a question JSON cannot hold is not asked (nothing published).
  const problem = questionProblem(request);
  if (problem) return { action: 'decline', reason: `the question was not asked: ${problem}` };
  const question = {
    message: request.message,
    requestedSchema: request.requestedSchema,
    ...(request.server !== undefined ? { server: request.server } : {}),
  };
  let resolved = false;
  const resolve = (answer: ElicitationAnswer) => {
    if (resolved) return;
    resolved = true;
    run.openQuestions.delete(toolCallId);
    signal.removeEventListener('abort', onCancel);
    const reason = answer.action === 'accept' ? {} : { reason: answer.reason };
    run.emit({ type: 'elicitationResolved', turnIndex, toolCallId, toolName, action: answer.action, ...reason });
  };
  // Synchronous: a cancelled call's question resolves before the call's end is published.
  const onCancel = () => resolve(cancelled());
  signal.addEventListener('abort', onCancel, { once: true });
  run.openQuestions.add(toolCallId);
  run.emit({ type: 'elicitationRequested', turnIndex, toolCallId, toolName, ...question });
  const answer = signal.aborted ? cancelled() : await ask(run, call, turnIndex, signal, question);
  resolve(answer);
  return answer;
}

async function ask(
  run: RunDeps,
  call: Omit<ToolCallBlock, 'type'>,
  turnIndex: number,
  signal: AbortSignal,
  question: ElicitationRequest,
): Promise<ElicitationAnswer> {
  const { agent } = run;
  const handler = agent.options.approval;
  let decision: ApprovalDecision | typeof ABORTED;
  if (handler) {
    const request = { toolCallId: call.id, toolName: call.name, arguments: structuredClone(call.arguments) };
    try {
      const value = await run.awaitUser(
        raceAbort(handler({ ...request, turnIndex, elicitation: structuredClone(question) }, { signal }), signal),
      );
      if (value === ABORTED) return cancelled();
      const checked = checkApprovalDecision(value);
      if (!checked.ok) throw new Error(`the approval handler returned an invalid decision: ${checked.problem}`);
      decision = checked.value;
    } catch (error) {
      run.reportPolicyError('approval', error, turnIndex);
      return { action: 'decline', reason: `the approval handler failed: ${errorMessage(error)}` };
    }
  } else if (agent.persister) {
    decision = await waitForResolve(run, call, signal, question);
    if (decision === ABORTED) return cancelled();
  } else {
    return { action: 'decline', reason: NO_HANDLER };
  }
  if (!decision.approved) return { action: 'decline', reason: decision.reason ?? 'the user declined to answer' };
  const content = 'arguments' in decision && decision.arguments ? decision.arguments : {};
  return { action: 'accept', content };
}

/** Stored with the step that published the request; `resolveApproval` quotes that step's version. */
function waitForResolve(
  run: RunDeps,
  call: Omit<ToolCallBlock, 'type'>,
  signal: AbortSignal,
  question: ElicitationRequest,
): Promise<ApprovalDecision | typeof ABORTED> {
  const persister = run.agent.persister;
  persister?.flushStep();
  const pending: PendingApproval = {
    toolCallId: call.id,
    toolName: call.name,
    arguments: publishedArguments(call.arguments),
    version: persister?.version ?? 0,
    elicitation: question,
  };
  return new Promise((resolve) => {
    const done = (value: ApprovalDecision | typeof ABORTED) => {
      run.elicitations.delete(call.id);
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = () => done(ABORTED);
    if (signal.aborted) return done(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    run.elicitations.set(call.id, { pending, answer: done });
  });
}

function cancelled(): ElicitationAnswer {
  return { action: 'cancel', reason: 'the tool call was cancelled' };
}

/**
 * After a restart: a question that was out when the process died died with it (the server's
 * request with its connection). Resolved as cancelled before the resumed turn goes on, so the
 * log pairs it; the call itself follows its replay rule.
 */
export function cancelCutQuestions(
  run: RunDeps,
  turnIndex: number,
  calls: ReadonlyArray<{ id: string; name: string }>,
): void {
  for (const call of calls) {
    run.emit({
      type: 'elicitationResolved',
      turnIndex,
      toolCallId: call.id,
      toolName: call.name,
      action: 'cancel',
      reason: 'interrupted by restart',
    });
  }
}

/** Why a tool's question cannot be published as it is (a message that is no string, a schema JSON cannot hold). */
function questionProblem(request: ElicitationRequest): string | null {
  const { message, requestedSchema, server } = request as {
    message: unknown;
    requestedSchema: unknown;
    server?: unknown;
  };
  if (typeof message !== 'string') return 'message must be a string';
  if (server !== undefined && typeof server !== 'string') return 'server must be a string';
  if (typeof requestedSchema !== 'object' || requestedSchema === null || Array.isArray(requestedSchema))
    return 'requestedSchema must be a JSON Schema object';
  const problem = jsonProblem(requestedSchema, 'requestedSchema');
  return problem && `${problem}, which JSON cannot hold`;
}
