import { type Counters, type NumericCounter, zeroCounters } from '../../domain/index.js';
import { callsOf, findAgentEnd, type RunLog } from './common.js';

/** What the event log says the counters of a stretch of runs must be. */
interface Tally {
  turnEnd: number;
  beforeModelCall: number;
  messageStart: number;
  retry: number;
  retryDelayMs: number;
  modelFallback: number;
  contextCompacted: number;
  toolCallBlocks: number;
  toolExecutionStart: number;
  failedStartedEnds: number;
  unstartedEnds: number;
  toolApprovalRequested: number;
  deniedApprovals: number;
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

function emptyTally(): Tally {
  return {
    turnEnd: 0,
    beforeModelCall: 0,
    messageStart: 0,
    retry: 0,
    retryDelayMs: 0,
    modelFallback: 0,
    contextCompacted: 0,
    toolCallBlocks: 0,
    toolExecutionStart: 0,
    failedStartedEnds: 0,
    unstartedEnds: 0,
    toolApprovalRequested: 0,
    deniedApprovals: 0,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function tallyRun(run: RunLog, tally: Tally): void {
  // Tool call ids are scoped to their turn; a turnStart opens a new scope.
  let started = new Set<string>();
  for (const { event } of run.events) {
    switch (event.type) {
      case 'turnStart':
        started = new Set();
        break;
      case 'turnEnd':
        tally.turnEnd += 1;
        tally.toolCallBlocks += callsOf(event.assistant).length;
        break;
      case 'beforeModelCall':
        tally.beforeModelCall += 1;
        break;
      case 'messageStart':
        tally.messageStart += 1;
        break;
      case 'messageEnd': {
        const usage = event.message?.usage;
        tally.usage.input += count(usage?.input);
        tally.usage.output += count(usage?.output);
        tally.usage.cacheRead += count(usage?.cacheRead);
        tally.usage.cacheWrite += count(usage?.cacheWrite);
        break;
      }
      case 'retry':
        tally.retry += 1;
        tally.retryDelayMs += count(event.delayMs);
        break;
      case 'modelFallback':
        tally.modelFallback += 1;
        break;
      case 'contextCompacted':
        tally.contextCompacted += 1;
        break;
      case 'toolApprovalRequested':
        tally.toolApprovalRequested += 1;
        break;
      case 'toolApprovalResolved':
        if (event.approved === false) tally.deniedApprovals += 1;
        break;
      case 'toolExecutionStart':
        tally.toolExecutionStart += 1;
        started.add(event.toolCallId);
        break;
      case 'toolExecutionEnd':
        if (!started.has(event.toolCallId)) tally.unstartedEnds += 1;
        else if (event.isError) tally.failedStartedEnds += 1;
        break;
      default:
        break;
    }
  }
}

const NUMERIC_COUNTERS = Object.keys(zeroCounters()).filter((key) => key !== 'failureCodes') as NumericCounter[];

/** `after - before` per numeric counter: what one run added to the agent's cumulative counters. */
function delta(after: Counters, before: Counters): Record<NumericCounter, number> {
  const result = {} as Record<NumericCounter, number>;
  for (const key of NUMERIC_COUNTERS) result[key] = count(after?.[key]) - count(before[key]);
  return result;
}

function compare(where: string, d: Record<NumericCounter, number>, t: Tally, out: string[]): void {
  const equal = (counter: NumericCounter, expected: number, what: string): void => {
    if (Math.abs(d[counter] - expected) > 1e-9)
      out.push(`counters: ${where}: ${counter} is ${d[counter]} but the log has ${expected} ${what}`);
  };
  const atLeast = (counter: NumericCounter, minimum: number, what: string): void => {
    if (d[counter] < minimum)
      out.push(`counters: ${where}: ${counter} is ${d[counter]}, less than the ${minimum} ${what}`);
  };
  equal('turns', t.turnEnd, 'turnEnd events');
  equal('modelCalls', t.beforeModelCall, 'beforeModelCall events');
  atLeast('modelCalls', t.messageStart, 'messageStart events');
  equal('retries', t.retry, 'retry events');
  equal('backoffMs', t.retryDelayMs, 'ms of retry.delayMs');
  equal('modelFallbacks', t.modelFallback, 'modelFallback events');
  equal('overflowRecoveries', t.contextCompacted, 'contextCompacted events');
  equal('toolCallsRequested', t.toolCallBlocks, 'tool-call blocks in turnEnd assistants');
  equal('toolCallsExecuted', t.toolExecutionStart, 'toolExecutionStart events');
  equal('toolCallsFailed', t.failedStartedEnds, 'toolExecutionEnd events with isError after a start');
  equal('approvalsRequested', t.toolApprovalRequested, 'toolApprovalRequested events');
  equal('approvalsDenied', t.deniedApprovals, 'toolApprovalResolved events with approved false');
  const unstarted = d.toolCallsInvalid + d.toolCallsRejected;
  if (unstarted > t.unstartedEnds) {
    out.push(
      `counters: ${where}: toolCallsInvalid + toolCallsRejected is ${unstarted}, more than the ${t.unstartedEnds} toolExecutionEnd events without a start`,
    );
  }
  atLeast('tokensIn', t.usage.input, 'input tokens of messageEnd messages');
  atLeast('tokensOut', t.usage.output, 'output tokens of messageEnd messages');
  atLeast('tokensCacheRead', t.usage.cacheRead, 'cache-read tokens of messageEnd messages');
  atLeast('tokensCacheWrite', t.usage.cacheWrite, 'cache-write tokens of messageEnd messages');
}

/**
 * Counters are cumulative per agent: each agentEnd is compared with the previous agentEnd's
 * counters (zero for the first), against the events of the runs since then.
 */
export function checkCounters(runs: readonly RunLog[], out: string[]): void {
  let before: Counters = zeroCounters();
  let tally = emptyTally();
  let first = true;
  for (const run of runs) {
    tallyRun(run, tally);
    const agentEnd = findAgentEnd(run);
    if (!agentEnd) continue;
    const counters = agentEnd.event.counters;
    const where = `run ${run.runId} (agentEnd at ${agentEnd.at})`;
    const d = delta(counters, before);
    if (!first) {
      for (const key of NUMERIC_COUNTERS) {
        if (d[key] < 0)
          out.push(`counters: ${where}: ${key} went down from ${count(before[key])} to ${count(counters?.[key])}`);
      }
    }
    compare(first ? where : `${where}, since the previous agentEnd`, d, tally, out);
    before = counters ?? zeroCounters();
    tally = emptyTally();
    first = false;
  }
}
