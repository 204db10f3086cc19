import type { Counters } from '../domain/counters.js';
import type { FailureCode } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import type { Usage } from '../domain/messages.js';
import { toolCallsOf } from '../domain/messages.js';
import { costOf, type ModelPricing } from '../model/port.js';

/**
 * Keeps the counters in step with the event log: most counters are derived from the events as
 * they are published, so they cannot disagree with the log. The rest (usage of every attempt,
 * invalid and rejected calls, failure codes) are recorded where they happen.
 */
export class CounterLedger {
  private readonly startedCalls = new Set<string>();
  /** Closed when the run ends: a late callback must not move counters the log no longer shows. */
  private closed = false;

  close(): void {
    this.closed = true;
  }

  /** Calls a resumed run inherits as started: their end still counts as a failure when it is one. */
  markStarted(callIds: Iterable<string>): void {
    for (const id of callIds) this.startedCalls.add(id);
  }

  constructor(readonly counters: Counters) {}

  observe(event: AgentEvent): void {
    if (this.closed) return;
    const c = this.counters;
    switch (event.type) {
      case 'beforeModelCall':
        c.modelCalls++;
        break;
      case 'toolApprovalRequested':
        c.approvalsRequested++;
        break;
      case 'toolApprovalResolved':
        if (!event.approved) c.approvalsDenied++;
        break;
      case 'toolExecutionStart':
        c.toolCallsExecuted++;
        this.startedCalls.add(event.toolCallId);
        break;
      case 'toolExecutionEnd':
        if (this.startedCalls.delete(event.toolCallId) && event.isError) c.toolCallsFailed++;
        break;
      case 'turnEnd':
        c.turns++;
        if (event.reason === 'error') c.turnsFailed++;
        if (event.assistant) c.toolCallsRequested += toolCallsOf(event.assistant).length;
        break;
      case 'retry':
        c.retries++;
        c.backoffMs += event.delayMs;
        break;
      case 'modelFallback':
        c.modelFallbacks++;
        break;
      default:
        break;
    }
  }

  /** Usage is counted for every attempt, retried ones included: those tokens were paid for. */
  recordUsage(usage: Usage | undefined, pricing: ModelPricing | undefined): void {
    if (!usage || this.closed) return;
    const c = this.counters;
    c.tokensIn += usage.input;
    c.tokensOut += usage.output;
    c.tokensCacheRead += usage.cacheRead ?? 0;
    c.tokensCacheWrite += usage.cacheWrite ?? 0;
    c.costUsd += costOf(usage, pricing);
  }

  recordFailure(code: FailureCode): void {
    if (this.closed) return;
    this.counters.failureCodes[code] = (this.counters.failureCodes[code] ?? 0) + 1;
  }

  increment(
    key:
      | 'toolCallsInvalid'
      | 'toolCallsRejected'
      | 'steeringDelivered'
      | 'followUpsDelivered'
      | 'overflowRecoveries'
      | 'turnsFailed',
  ): void {
    if (!this.closed) this.counters[key]++;
  }
}
