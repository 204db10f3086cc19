import { checkToolParity, type Agent, type AgentEvent, type Message, type RunResult, type SteerReceipt } from 'agentchart';
import { checkInvariants } from 'agentchart/testing';
import type { Scenario } from './spec.js';
import type { WorldRecord } from './world.js';

/**
 * What must hold after every interleaving, whatever the order: the invariants of checkInvariants
 * (test/scenarios/README.md lists them) on the whole log, every run resolved, an abort while
 * running ends that run as aborted, every steering / follow-up message delivered exactly once or
 * still queued, parity of the history and of every model request, and counters that agree with
 * what the world saw.
 */

export interface RunRecord {
  runId: string | null;
  result: RunResult | null;
  /** Each agent.abort() while this run was running: the event log's length, its moment, and the scheduler tasks released so far. */
  aborts: Array<{ at: number; moment: number; release: number }>;
  /** Scheduler tasks released when this run's agentEnd was published. */
  endedAtRelease: number | null;
  /** The driver's moment just before prompt() / continue(). */
  startedAt: number;
}

export interface SentMessage {
  text: string;
  source: 'steering' | 'followUp';
  receipt: SteerReceipt | null;
  /** Whether history held the message when its receipt resolved. */
  inHistoryWhenResolved: boolean;
  /** The driver's moment of the steer()/followUp() call, and whether a run was going. */
  moment: number;
  duringRun: boolean;
}

export interface CheckInput {
  scenario: Scenario;
  agent: Pick<Agent, 'messages' | 'counters' | 'running' | 'snapshot'>;
  events: readonly AgentEvent[];
  /** The driver's moment of each event (same counter as aborts and world calls). */
  momentOf: readonly number[];
  runs: readonly RunRecord[];
  sent: readonly SentMessage[];
  record: WorldRecord;
  modelCount: number;
}

export function checkScenario(input: CheckInput): string[] {
  const violations: string[] = [];
  const history = input.agent.messages;
  for (const violation of checkInvariants(input.events, history).violations) violations.push(`invariant: ${violation}`);
  checkRuns(input, violations);
  checkQueues(input, violations);
  const parity = checkToolParity(history);
  if (!parity.ok) violations.push(...parity.violations.map((v) => `parity: final history: ${v}`));
  input.record.requests.forEach((request, index) => {
    const check = checkToolParity(request.messages as Message[]);
    if (!check.ok) violations.push(...check.violations.map((v) => `parity: model request ${index} (${request.model}): ${v}`));
  });
  checkCommittedResults(input.events, violations);
  checkSteeringInterrupts(input, violations);
  checkCounters(input, violations);
  return violations;
}

/**
 * Steering interrupts whatever part of a turn it lands in (DESIGN §9): once a steering message was
 * accepted while a turn was open, no tool call of that turn starts and no approval is requested.
 */
function checkSteeringInterrupts({ scenario, events, momentOf, sent }: CheckInput, out: string[]): void {
  if (!scenario.config.steeringInterrupts) return;
  for (const message of sent) {
    if (message.source !== 'steering' || !message.duringRun) continue;
    const before = events.filter((_, index) => momentOf[index]! < message.moment);
    const last = before.at(-1);
    if (!last) continue;
    const runId = last.runId;
    const started = before.filter((e) => e.runId === runId && e.type === 'turnStart').at(-1);
    if (!started || started.turnIndex === undefined) continue;
    const turn = started.turnIndex;
    if (before.some((e) => e.runId === runId && e.type === 'turnEnd' && e.turnIndex === turn)) continue;
    const startsWork = (e: AgentEvent) => e.type === 'toolExecutionStart' || e.type === 'toolApprovalRequested';
    const late = events.find((e, index) => momentOf[index]! > message.moment && e.runId === runId && e.turnIndex === turn && startsWork(e));
    if (late) {
      out.push(`steering: "${message.text}" was accepted during turn ${turn}, yet ${late.type} followed at seq ${late.seq}`);
    }
  }
}

const CANCELLED_BY_STEERING = 'cancelled: steering';
const SKIPPED_BY_STEERING = 'skipped: steering';
const ABORTED_RESULT = 'aborted: the run was cancelled';

/**
 * What was published is what is committed: each turnEnd result matches its call's
 * toolExecutionEnd; steering-cancelled results only end steering-interrupted turns (or turns an
 * abort ended right after the cancellation), aborted results only aborted turns.
 */
function checkCommittedResults(events: readonly AgentEvent[], out: string[]): void {
  let ends = new Map<string, { result: string; isError: boolean }>();
  for (const event of events) {
    if (event.type === 'turnStart') ends = new Map();
    if (event.type === 'toolExecutionEnd') ends.set(`${event.runId}:${event.toolCallId}`, { result: event.result, isError: event.isError });
    if (event.type !== 'turnEnd') continue;
    for (const result of event.toolResults) {
      const published = ends.get(`${event.runId}:${result.toolCallId}`);
      if (published && (published.result !== result.content || published.isError !== result.isError)) {
        out.push(`results: ${result.toolCallId} was published as ${JSON.stringify(published.result)} but committed as ${JSON.stringify(result.content)} (turnEnd seq ${event.seq})`);
      }
      const bySteering = result.content.startsWith(CANCELLED_BY_STEERING) || result.content.startsWith(SKIPPED_BY_STEERING);
      if (bySteering && event.reason !== 'steeringInterrupt' && event.reason !== 'aborted') {
        out.push(`results: ${result.toolCallId} was cancelled by steering in a turn that ended ${event.reason} (seq ${event.seq})`);
      }
      if (result.content.startsWith(ABORTED_RESULT) && event.reason !== 'aborted') {
        out.push(`results: ${result.toolCallId} got the aborted result in a turn that ended ${event.reason} (seq ${event.seq})`);
      }
    }
  }
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Events that mean new work began: none may follow an abort in its run. */
const WORK_EVENTS = new Set<AgentEvent['type']>(['beforeModelCall', 'toolExecutionStart', 'toolApprovalRequested', 'retry', 'modelFallback', 'contextCompacted']);

/**
 * An abort that lands while the run's last turn is settling (e.g. from a messageEnd or turnEnd
 * subscriber) may find the outcome already decided: it is not required to win then. An abort
 * after which a turn starts must end the run as aborted.
 */
function abortMustWin(events: readonly AgentEvent[], runId: string | null, at: number): boolean {
  return events.slice(at).some((e) => e.runId === runId && e.type === 'turnStart');
}

/**
 * After agent.abort() nothing new starts — no work event, no call into a model, tool, approval
 * handler or policy until the run ends — and the run ends before the scheduler releases any other task.
 */
function checkAbortStopsWork({ events, momentOf, record }: CheckInput, run: RunRecord, index: number, out: string[]): void {
  const first = run.aborts[0];
  if (!first) return;
  const work = events.slice(first.at).find((e) => e.runId === run.runId && WORK_EVENTS.has(e.type));
  if (work) out.push(`abort: run ${index} began new work after agent.abort() (event #${first.at}): ${work.type} at seq ${work.seq}`);
  const end = events.findIndex((e) => e.runId === run.runId && e.type === 'agentEnd');
  const endMoment = end === -1 ? Number.POSITIVE_INFINITY : momentOf[end]!;
  const late = record.invocations.find((call) => call.moment > first.moment && call.moment < endMoment);
  if (late) out.push(`abort: run ${index} called the ${late.what} after agent.abort() (event #${first.at}), before its agentEnd`);
  if (run.endedAtRelease !== null && run.endedAtRelease !== first.release) {
    out.push(`abort: run ${index} waited for ${run.endedAtRelease - first.release} more scheduler task(s) after agent.abort() before its agentEnd`);
  }
}

/** Between a run's agentEnd and the next run's start nothing may call into the world. */
function checkQuietAfterEnd({ events, momentOf, record, runs }: CheckInput, out: string[]): void {
  runs.forEach((run, index) => {
    const end = events.findIndex((e) => e.runId === run.runId && e.type === 'agentEnd');
    if (end === -1) return;
    const until = runs[index + 1]?.startedAt ?? Number.POSITIVE_INFINITY;
    const late = record.invocations.find((call) => call.moment > momentOf[end]! && call.moment < until);
    if (late) out.push(`late call: the ${late.what} was called after run ${index} ended (agentEnd seq ${events[end]!.seq})`);
  });
}

function checkRuns(input: CheckInput, out: string[]): void {
  checkQuietAfterEnd(input, out);
  const { agent, events, runs, record } = input;
  const history = agent.messages;
  runs.forEach((run, index) => {
    const result = run.result;
    if (!result) return void out.push(`hang: run ${index} never resolved its result`);
    checkAbortStopsWork(input, run, index, out);
    const mustWin = run.aborts.find((abort) => abortMustWin(events, run.runId, abort.at));
    if (mustWin !== undefined && result.status !== 'aborted') {
      out.push(`abort: run ${index} was aborted while running (after event #${mustWin.at}) but ended ${result.status}/${result.endReason}`);
    }
    if (result.status === 'aborted' && run.aborts.length === 0 && !record.providerAborted) {
      out.push(`abort: run ${index} ended aborted though nobody aborted it`);
    }
    // A run's result is the history when it ended: later runs only append to it.
    if (!sameJson(result.messages, history.slice(0, result.messages.length))) {
      out.push(`history: run ${index}'s result.messages is not a prefix of the final history (something changed it after the run ended)`);
    }
    if (index === runs.length - 1 && result.messages.length !== history.length) {
      out.push(`history: ${history.length - result.messages.length} message(s) committed after the last run ended`);
    }
    if (index === runs.length - 1 && !sameJson(result.counters, agent.counters)) {
      out.push(`counters: the agent's counters changed after the last run ended: ${JSON.stringify(result.counters)} → ${JSON.stringify(agent.counters)}`);
    }
  });
  if (agent.running) out.push('hang: the agent is still running after the scenario');
}

function checkQueues({ agent, sent, events }: CheckInput, out: string[]): void {
  const history = agent.messages;
  const snapshot = agent.snapshot();
  const count = (messages: readonly Message[], text: string) => messages.filter((m) => m.role === 'user' && m.content === text).length;
  for (const message of sent) {
    const inHistory = count(history, message.text);
    const ownQueue = message.source === 'steering' ? snapshot.steeringQueue : snapshot.followUpQueue;
    const otherQueue = message.source === 'steering' ? snapshot.followUpQueue : snapshot.steeringQueue;
    const queued = count(ownQueue, message.text);
    const where = `"${message.text}" (in history ${inHistory}×, queued ${queued}×)`;
    if (inHistory + queued === 0) out.push(`nothing lost: ${where} was dropped`);
    if (inHistory + queued > 1) out.push(`nothing lost: ${where} is there more than once`);
    if (count(otherQueue, message.text) > 0) out.push(`nothing lost: ${where} sits in the wrong queue`);
    const receipt = message.receipt;
    if (!receipt) {
      out.push(`receipt: ${where} never got a receipt though no run is active`);
      continue;
    }
    if (receipt.status === 'delivered') {
      if (inHistory !== 1) out.push(`receipt: ${where} is reported delivered (turn ${receipt.turnIndex}) but is not in history once`);
      // The model call of the turn the receipt names (if that turn made one) carries the message.
      const callOfTurn = events.find((e) => e.type === 'beforeModelCall' && e.turnIndex === receipt.turnIndex);
      if (callOfTurn?.type === 'beforeModelCall' && !callOfTurn.messages.some((m) => m.role === 'user' && m.content === message.text)) {
        out.push(`receipt: ${where} is reported delivered in turn ${receipt.turnIndex} but that turn's model call (seq ${callOfTurn.seq}) did not carry it`);
      }
      if (!message.inHistoryWhenResolved) out.push(`receipt: ${where} was reported delivered before it was committed`);
    } else if (message.inHistoryWhenResolved) {
      out.push(`receipt: ${where} is reported still queued though it was already committed`);
    }
  }
}

function checkCounters({ agent, events, record, scenario, modelCount }: CheckInput, out: string[]): void {
  const c = agent.counters;
  const history = agent.messages;
  const delivered = (prefix: string) => history.filter((m) => m.role === 'user' && m.content.startsWith(prefix)).length;
  if (c.steeringDelivered !== delivered('steer ')) out.push(`counters: steeringDelivered ${c.steeringDelivered} ≠ ${delivered('steer ')} steering messages in history`);
  if (c.followUpsDelivered !== delivered('followUp ')) out.push(`counters: followUpsDelivered ${c.followUpsDelivered} ≠ ${delivered('followUp ')} follow-ups in history`);
  const aborts = events.filter((e) => e.type === 'agentEnd' && e.status === 'aborted').length;
  const requests = record.requests.length;
  if (requests > c.modelCalls) out.push(`counters: the models got ${requests} requests but modelCalls is ${c.modelCalls} (a model was called after its run ended?)`);
  if (c.modelCalls > requests + aborts) out.push(`counters: modelCalls ${c.modelCalls} > ${requests} requests + ${aborts} aborted runs`);
  const started = new Set(events.flatMap((e) => (e.type === 'toolExecutionStart' ? [`${e.runId}:${e.toolCallId}`] : [])));
  const startedIds = new Set([...started].map((key) => key.split(':')[1]));
  for (const id of record.executions) if (!startedIds.has(id)) out.push(`counters: tool call ${id} ran without a toolExecutionStart`);
  if (record.executions.length > c.toolCallsExecuted) out.push(`counters: ${record.executions.length} tool executions > toolCallsExecuted ${c.toolCallsExecuted}`);
  // A request an abort resolved before the handler was asked counts as requested, not asked.
  const abortedRequests = events.filter((e) => e.type === 'toolApprovalResolved' && !e.approved).length;
  if (record.approvalCalls.length > c.approvalsRequested || record.approvalCalls.length < c.approvalsRequested - abortedRequests) {
    out.push(`counters: the approval handler ran ${record.approvalCalls.length}× but approvalsRequested is ${c.approvalsRequested}`);
  }
  const turnStarts = events.filter((e) => e.type === 'turnStart').length;
  if (c.turns !== turnStarts) out.push(`counters: turns ${c.turns} ≠ ${turnStarts} turnStart events`);
  if (agent.snapshot().turnIndex !== c.turns) out.push(`counters: the agent's turnIndex ${agent.snapshot().turnIndex} ≠ ${c.turns} turns`);
  // Per turn: maxAttempts per model, one overflow re-run (R4: retries are never multiplied).
  const perTurn = new Map<string, number>();
  for (const e of events) if (e.type === 'beforeModelCall') perTurn.set(`${e.runId}#${e.turnIndex}`, (perTurn.get(`${e.runId}#${e.turnIndex}`) ?? 0) + 1);
  const bound = scenario.config.maxAttempts * modelCount + 1;
  for (const [turn, calls] of perTurn) if (calls > bound) out.push(`counters: turn ${turn} made ${calls} model calls > ${bound}`);
  for (const [key, value] of Object.entries(c)) {
    if (typeof value === 'number' && !(value >= 0)) out.push(`counters: ${key} is ${value}`);
  }
  const failures = Object.values(c.failureCodes).reduce((sum, n) => sum + n, 0);
  if (failures > c.modelCalls) out.push(`counters: ${failures} failure codes > ${c.modelCalls} model calls`);
}
