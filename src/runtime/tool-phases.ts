import { fromPromise } from 'xstate';
import { errorResult } from '../../machines/tool-results.js';
import type {
  ModelReply,
  PartitionOutput,
  PreDispatchOutput,
  PreparedCall,
  PreprocessOutput,
} from '../../machines/turn.types.js';
import type { PolicySlot } from '../domain/events.js';
import {
  toMessage,
  toolCallsOf,
  type Message,
  type ToolCallBlock,
  type ToolResultMessage,
} from '../domain/messages.js';
import { checkPreDispatchVerdict } from '../policies/verdicts.js';
import type { ToolRegistry } from '../tools/registry.js';
import {
  prepareToolCall,
  type PrepareToolCallResult,
  type RawToolCallArguments,
  type ToolCallRequest,
} from '../tools/validate.js';
import { errorMessage, runIsolated } from './policy-runner.js';
import { runDeps, type RunDeps } from './run-registry.js';
import { withRunSignal } from './timers.js';
import type { AgentState } from './run-session.js';

/** Preprocess: unknown tools and invalid arguments get an error result and never start. */
export function prepareCalls(
  run: RunDeps,
  input: {
    turnIndex: number;
    reply: ModelReply;
    decided: number[];
    approved: string[];
    /** Arguments an approval gave calls before a restart (approveWith): those calls run with them. */
    approvedArguments?: Record<string, Record<string, unknown>>;
  },
  /** False for a reply restored after a restart: its invalid calls were counted before the crash. */
  count = true,
): PreprocessOutput {
  const { reply } = input;
  const invalidCalls = new Map(reply.invalidCalls.map((call) => [call.id, call]));
  const decided = new Set(input.decided);
  const approvedBefore = new Set(input.approved);
  const prepared: PreparedCall[] = [];
  const invalid: Array<{ position: number; result: ToolResultMessage }> = [];
  const { agent } = run;
  toolCallsOf(reply.message).forEach((call, position) => {
    if (decided.has(position)) return; // decided before a restart
    const raw = invalidCalls.get(call.id);
    const decoded = raw ? { rawArguments: raw.rawArguments, invalidReason: raw.reason } : undefined;
    const rewrite = approvedBefore.has(call.id) ? input.approvedArguments?.[call.id] : undefined;
    const outcome = validateToolCall(agent.registry, rewrite ? { ...call, arguments: rewrite } : call, decoded);
    if (outcome.ok) {
      const approved = approvedBefore.has(call.id) || !needsApproval(agent, call.name);
      const timeoutMs = outcome.tool.timeoutMs ?? agent.resolved.timeouts.toolMs;
      const entry = { position, call: { ...call, arguments: outcome.arguments }, approved, cleared: false, timeoutMs };
      prepared.push(rewrite ? { ...entry, rewritten: true } : entry);
    } else {
      if (count) run.ledger.increment('toolCallsInvalid');
      invalid.push({ position, result: errorResult(call, outcome.message) });
    }
  });
  return { prepared, invalid };
}

export function needsApproval(agent: Pick<AgentState, 'resolved' | 'registry'>, toolName: string): boolean {
  const mode = agent.resolved.approvalMode;
  if (mode === 'bypass') return false;
  if (mode === 'always') return true;
  return agent.registry.get(toolName)?.requiresApproval === true;
}

/**
 * `prepareToolCall`, isolated: the tool's schema is user code (a `refine` or `transform` that
 * throws), and a throw there is an invalid-arguments result, never an internal error.
 */
export function validateToolCall(
  registry: ToolRegistry,
  call: ToolCallRequest,
  raw?: RawToolCallArguments,
): PrepareToolCallResult {
  try {
    return prepareToolCall(registry, call, raw);
  } catch (error) {
    const message = `Invalid arguments for tool "${call.name}": the tool's schema threw: ${errorMessage(error)}`;
    return { ok: false, kind: 'invalidArguments', message };
  }
}

/**
 * Pre-dispatch, batch-wide: every prepared call that has not cleared it with its current arguments
 * goes through the policies in call order. A throwing policy counts as Continue and, since it only
 * ever saw a copy of the arguments, its changes are rolled back.
 */
export function createPreDispatchRunner() {
  type Input = { turnIndex: number; prepared: PreparedCall[] };
  return fromPromise<PreDispatchOutput, Input>(async ({ input, system, signal: actorSignal }) => {
    const run = runDeps(system);
    const signal = withRunSignal(run, actorSignal);
    const policies = run.agent.options.policies?.preDispatch ?? [];
    const batch: ToolCallBlock[] = input.prepared.map((p) => p.call);
    const messages = run.agent.history.slice();
    const prepared: PreparedCall[] = [];
    const skippedCalls: PreDispatchOutput['skipped'] = [];
    const injected: Message[] = [];
    const output = (): PreDispatchOutput => ({ kind: 'continue', prepared, skipped: skippedCalls, injected });
    for (const entry of input.prepared) {
      if (entry.cleared) {
        prepared.push(entry);
        continue;
      }
      let call = entry.call;
      let skipped: string | null = null;
      for (const policy of policies) {
        // Aborted (the actor was stopped or the run aborted): no policy is asked anything more.
        if (signal.aborted || run.signal.aborted) return output();
        const toolCall = { id: call.id, name: call.name, arguments: structuredClone(call.arguments) };
        const ask = () => policy({ toolCall, batch, messages, turnIndex: input.turnIndex });
        const report = (slot: PolicySlot, error: unknown) => run.reportPolicyError(slot, error, input.turnIndex);
        const verdict = await run.awaitUser(runIsolated('preDispatch', ask, checkPreDispatchVerdict, report, signal));
        if (signal.aborted) return output();
        if (!verdict) continue;
        if (verdict.verdict === 'stop') return { ...output(), kind: 'stop', reason: verdict.reason };
        if (verdict.verdict === 'skip') {
          skipped = verdict.reason;
          break;
        }
        if (verdict.verdict === 'inject') injected.push(...verdict.messages.map(toMessage));
        if (verdict.verdict === 'continue' && 'arguments' in verdict) {
          const rewritten = validateRewrite(run, call, verdict.arguments, input.turnIndex);
          if (rewritten) call = { ...call, arguments: rewritten };
        }
      }
      if (skipped !== null) {
        run.ledger.increment('toolCallsRejected');
        skippedCalls.push({ position: entry.position, result: errorResult(call, `skipped: ${skipped}`) });
      } else {
        prepared.push({ ...entry, call, cleared: true });
      }
    }
    return output();
  });
}

function validateRewrite(
  run: RunDeps,
  call: ToolCallBlock,
  args: Record<string, unknown>,
  turnIndex: number,
): Record<string, unknown> | null {
  const outcome = validateToolCall(run.agent.registry, { ...call, arguments: args });
  if (outcome.ok) return outcome.arguments;
  run.reportPolicyError('preDispatch', new Error(`rewritten arguments rejected: ${outcome.message}`), turnIndex);
  return null;
}

/** A custom `partition(calls)`: groups of indices into the prepared calls, or why they are invalid. */
export function partitionCalls(run: RunDeps, prepared: readonly PreparedCall[]): PartitionOutput {
  const execution = run.agent.resolved.toolExecution;
  if (typeof execution !== 'object' || !('partition' in execution))
    return { groups: [prepared.map((_, index) => index)] };
  let groups: number[][];
  try {
    groups = execution.partition(prepared.map((p) => p.call));
  } catch (error) {
    return { invalid: `partition threw: ${errorMessage(error)}` };
  }
  const problem = partitionProblem(groups, prepared.length);
  return problem ? { invalid: problem } : { groups };
}

function partitionProblem(groups: unknown, count: number): string | null {
  if (!Array.isArray(groups) || !groups.every(Array.isArray)) return 'partition must return an array of index arrays';
  const seen = new Set<number>();
  for (const group of groups as unknown[][]) {
    for (const index of group) {
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count)
        return `index ${String(index)} is out of range (0..${count - 1})`;
      if (seen.has(index)) return `index ${index} appears twice`;
      seen.add(index);
    }
  }
  if (seen.size !== count) {
    const missing = [...Array(count).keys()].filter((index) => !seen.has(index));
    return `indices ${missing.join(', ')} are missing`;
  }
  return null;
}
