import type { InspectionEvent, Observer } from 'xstate';
import type { AgentEvent } from '../../domain/events.js';
import type { Message } from '../../domain/messages.js';
import type { RunResult } from '../../domain/outcomes.js';
import { createAgent, type Agent, type AgentRun } from '../../runtime/agent.js';
import { memoryStore } from '../../store/memory.js';
import type { PendingApproval, SessionStore } from '../../store/types.js';
import type { ApprovalDecision } from '../../policies/types.js';
import { DEFAULT_RETRY } from '../../runtime/options.js';
import type { Observed, ObservedMessage, ObservedRun, WorldCalls } from '../observed/types.js';
import { NEVER_MS, TrackedClock } from '../tracked-clock.js';
import { processStore, type ProcessStore } from './crash-store.js';
import { exploredOptions, type Spec } from './spec.js';
import { StateHash } from './state-hash.js';
import type { Step } from './types.js';
import { World, type Task } from './world.js';

/**
 * One explored session as the world sees it: the agent's process (a new one after each crash, on
 * the same store), everything it published, and what the world did to it (messages sent, aborts).
 * The explorer and the race driver move it; neither looks inside the agent.
 */

export interface PathRecord {
  pruned: boolean;
  steps: Step[];
  /** The log (after a crash: what the store kept; what was published but not stored is lost). */
  log: AgentEvent[];
  messages: Message[];
  result: RunResult | null;
  /** What the shared checker looks at. */
  observed: Observed;
  /** Why the path stopped without a result (a hang or a runaway), if it did. */
  stuck: string | null;
  crashed: boolean;
}

export interface Process {
  readonly index: number;
  readonly agent: Agent;
  readonly world: World;
  readonly clock: TrackedClock;
  readonly store: ProcessStore | null;
  run: AgentRun | null;
  result: RunResult | null;
  dead: boolean;
}

export interface SessionHooks {
  /** Attached to every agent of the path (writeTrace records with it). */
  inspect?: Observer<InspectionEvent>;
  /** Told of each process's clock (a trace is stamped with simulated time). */
  onClock?: (clock: TrackedClock) => void;
  /** Every agent event of the live process, as published (inside the agent's emit). */
  onEvent?: (event: AgentEvent, process: Process) => void;
  /** Every new process (the race driver schedules its world's tasks). */
  onProcess?: (process: Process) => void;
}

const SESSION_ID = 'explored-session';

export class Session {
  readonly log: AgentEvent[] = [];
  /** The log folded into a hash as it grows, plus the approval answers (a property may read them). */
  readonly hash = new StateHash();
  readonly steps: Step[] = [];
  readonly sent: ObservedMessage[] = [];
  readonly aborts: ObservedRun['aborts'] = [];
  /** One counter orders events, aborts, messages sent and calls into the world. */
  private moment = 0;
  private readonly momentOf: number[] = [];
  private readonly invocations: WorldCalls['invocations'] = [];
  private readonly executions: string[] = [];
  private readonly approvalCalls: string[] = [];
  /** The process each abort went to. */
  private readonly abortProcesses: number[] = [];
  /** From the agent's options: what the checker needs to know of them. */
  private settings = { steeringInterrupts: true, modelCallsPerTurn: 4 };
  /** Messages sent so far, per kind (they are numbered: "steer 1"). */
  readonly counts = { steer: 0, followUp: 0 };
  budget: number;
  crashed = false;
  current!: Process;
  private readonly shared: SessionStore | null;

  constructor(
    readonly spec: Spec,
    private readonly hooks: SessionHooks = {},
  ) {
    this.budget = spec.maxInterruptions;
    this.shared = spec.interruptions.has('crash') ? memoryStore() : null;
  }

  async start(): Promise<void> {
    await this.startProcess(0, 0, 0, false);
  }

  private async startProcess(index: number, now: number, modelCalls: number, resume: boolean): Promise<Process> {
    const { spec, hooks } = this;
    const clock = new TrackedClock(now);
    hooks.onClock?.(clock);
    const world = new World({
      replies: spec.replies,
      modelError: spec.interruptions.has('modelError'),
      toolError: spec.interruptions.has('toolError'),
      bodies: spec.bodies,
      approvals: spec.approvals,
    });
    // Model calls are counted across processes: tool-call ids stay unique in the session.
    world.modelCalls = modelCalls;
    const store = this.shared ? processStore(this.shared) : null;
    const base = typeof spec.agent === 'function' ? spec.agent() : spec.agent;
    this.settings = {
      steeringInterrupts: base.steeringInterrupts ?? true,
      modelCallsPerTurn:
        (base.retry?.maxAttempts ?? DEFAULT_RETRY.maxAttempts) * (1 + (base.fallbackModels?.length ?? 0)) + 1,
    };
    // With a store the world answers approvals through resolveApproval, so they survive a crash.
    const options = exploredOptions(spec, base, world, clock, spec.approvals.size > 0 && !store);
    const agent = createAgent({
      ...options,
      // The lease is no lifecycle point to explore: its renewal timer stays beyond the horizon (a crash releases it).
      ...(store ? { store: store.store, sessionId: SESSION_ID, lease: { ttlMs: NEVER_MS } } : {}),
      ...(hooks.inspect ? { inspect: hooks.inspect } : {}),
    });
    const process: Process = { index, agent, world, clock, store, run: null, result: null, dead: false };
    // Current before the prompt: the run's first events are published inside prompt().
    this.current = process;
    world.onPolicyCall = (what) => this.invocations.push({ what, moment: ++this.moment });
    world.watchers.push((task) => {
      this.invocations.push({ what: calledFor(task), moment: ++this.moment });
      if (task.kind === 'tool') this.executions.push(task.subject);
      if (task.kind === 'approval') this.approvalCalls.push(task.subject);
    });
    hooks.onProcess?.(process);
    agent.events.subscribe((event) => {
      if (process.dead) return;
      world.touch();
      this.log.push(event);
      this.momentOf.push(++this.moment);
      this.hash.update(canonicalEvent(event));
      hooks.onEvent?.(event, process);
    });
    if (store) {
      const { resumedRun } = await agent.ready;
      process.run = resume ? resumedRun : agent.prompt(spec.prompt);
    } else {
      process.run = agent.prompt(spec.prompt);
    }
    this.follow(process);
    return process;
  }

  private follow(process: Process): void {
    void process.run?.result.then((result) => {
      process.result = result;
      process.world.touch();
    });
  }

  /**
   * The world answers a durable approval. After a crash the run waits parked in the store (the new
   * process loaded it without resuming it): the answer continues it in this process.
   */
  answer(pending: PendingApproval, decision: ApprovalDecision): void {
    const process = this.current;
    const run = process.agent.resolveApproval(pending.toolCallId, decision, { version: pending.version });
    if (process.run) return;
    process.run = run;
    this.follow(process);
  }

  /**
   * The run has not ended (after a crash: a resumed run, or one parked at its approval; a session
   * the crash left without either has ended).
   */
  get running(): boolean {
    const process = this.current;
    const parked = process.run === null && process.agent.pendingApprovals().length > 0;
    return process.result === null && (process.run !== null || parked || !process.store || process.index === 0);
  }

  /** What the run waits on, for the readable path: "while the model answers call 1". */
  during(): string {
    const process = this.current;
    const task = process.world.tasks()[0];
    if (task) return waitingOn(task);
    const approval = process.agent.pendingApprovals()[0];
    if (approval) return `while the approval of ${approval.toolName} (${approval.toolCallId}) is pending`;
    const delay = process.clock.pendingDelays()[0];
    return delay !== undefined ? `while a ${delay} ms timer is pending` : 'while the run is busy';
  }

  /** The text the next message of this kind will carry. */
  nextText(kind: 'steer' | 'followUp'): string {
    return kind === 'steer' ? `steer ${this.counts.steer + 1}` : `follow-up ${this.counts.followUp + 1}`;
  }

  send(kind: 'steer' | 'followUp'): ObservedMessage {
    const text = this.nextText(kind);
    this.counts[kind]++;
    const message: ObservedMessage = {
      text,
      source: kind === 'steer' ? 'steering' : 'followUp',
      receipt: null,
      inHistoryWhenResolved: false,
      moment: ++this.moment,
      duringRun: this.running,
    };
    this.sent.push(message);
    const agent = this.current.agent;
    void (kind === 'steer' ? agent.steer(text) : agent.followUp(text)).then((receipt) => {
      message.receipt = receipt;
      message.inHistoryWhenResolved = agent.messages.some((m) => m.role === 'user' && m.content === text);
    });
    return message;
  }

  /** `whileWaiting`: the run waited on the world when the abort came (nothing was decided: it must win). */
  abort(whileWaiting: boolean): void {
    this.aborts.push({ at: this.log.length, moment: ++this.moment, whileWaiting });
    this.abortProcesses.push(this.current.index);
    this.current.agent.abort('user abort');
  }

  /** The process dies (its writes are lost, it does nothing more); a new one resumes the session from the store. */
  async crash(): Promise<void> {
    const process = this.current;
    // Dead at once (its writes lost, its events no part of the path); its lease is let go meanwhile.
    const released = process.store!.crash();
    process.dead = true;
    process.agent.abort('crash');
    // A dead process's timers die with it (a lease renewal would otherwise re-arm forever).
    process.clock.stop();
    this.crashed = true;
    await released;
    await this.startProcess(process.index + 1, process.clock.now(), process.world.modelCalls, true);
  }

  private abortsAfterCrash(storedLength: number): ObservedRun['aborts'] {
    return placeAborts(this.aborts, this.abortProcesses, this.current.index, this.log.length, storedLength);
  }

  /** The approval answers are part of the state: a property may read them from the steps. */
  recordStep(step: Step): void {
    this.steps.push(step);
    if (step.kind === 'approval') this.hash.update(`approval:${step.label}`);
  }

  /** The path's record: after a crash the log is what the store kept (what was published but not stored is lost). */
  async finish(stuck: string | null, pruned = false): Promise<PathRecord> {
    const process = this.current;
    const result = process.result;
    // The path is over: what the cleanup abort publishes is no part of it.
    process.dead = true;
    if (!result) process.agent.abort(pruned ? 'explored before' : 'path ended');
    const crashed = this.crashed && !pruned;
    const log = crashed && this.shared ? await this.shared.loadEvents(SESSION_ID) : this.log;
    const run: ObservedRun = {
      runId: log[0]?.runId ?? null,
      result,
      aborts: crashed ? this.abortsAfterCrash(log.length) : this.aborts,
      startedAt: 0,
    };
    const world: WorldCalls = {
      requests: process.world.requests,
      executions: this.executions,
      approvalCalls: process.store ? null : this.approvalCalls,
      invocations: this.invocations,
      providerAborted: false,
    };
    // After a crash the stored log has no moments and the dead process's calls are not the survivor's counters.
    const observed: Observed = {
      agent: process.agent,
      events: log,
      runs: [run],
      sent: this.sent,
      ...(crashed ? {} : { momentOf: this.momentOf, world }),
      ...this.settings,
    };
    return {
      pruned,
      steps: this.steps,
      log,
      messages: process.agent.snapshot().messages,
      result,
      observed,
      stuck,
      crashed,
    };
  }
}

/**
 * After a crash the log is the stored one: an abort the last process got is placed by its distance
 * from the end (the survivor's events are all stored); one the dead process got is gone with it.
 */
function placeAborts(
  aborts: ObservedRun['aborts'],
  processes: readonly number[],
  last: number,
  liveLength: number,
  storedLength: number,
): ObservedRun['aborts'] {
  return aborts
    .filter((_, i) => processes[i] === last)
    .map((abort) => ({ ...abort, at: storedLength - (liveLength - abort.at) }));
}

/** What a task is a call of: "the body of deploy (call_0_0)". */
function calledFor(task: Task): string {
  switch (task.kind) {
    case 'model':
      return `model for call ${task.subject}`;
    case 'tool':
      return `body of ${task.toolName} (${task.subject})`;
    case 'approval':
      return `approval handler for ${task.toolName} (${task.subject})`;
  }
}

export function waitingOn(task: Task): string {
  switch (task.kind) {
    case 'model':
      return `while the model answers call ${task.subject}`;
    case 'tool':
      return `while ${task.toolName} (${task.subject}) runs`;
    case 'approval':
      return `while the approval of ${task.toolName} (${task.subject}) is pending`;
  }
}

/** An event as the state sees it: without its run id (a crash and a fresh run differ only there). */
function canonicalEvent(event: AgentEvent): string {
  const { runId: _runId, ...rest } = event;
  return JSON.stringify(rest);
}
