import type { AgentEvent } from '../../domain/events.js';
import { Session, type PathRecord, type Process, type SessionHooks } from './session.js';
import type { Spec } from './spec.js';
import type { Step } from './types.js';
import type { Task } from './world.js';

/**
 * The explorer's driver of one path: at every quiescent point (the agent waits on the world) the
 * enabled moves are listed and the chooser picks one. The path ends when the run settles, when
 * nothing can move (a hang), or when its state was explored before.
 */

/** Picks one of the labels at a choice point (returns its index). */
export interface Chooser {
  choose(labels: readonly string[]): number;
}

export interface PathHooks extends Omit<SessionHooks, 'onProcess'> {
  chooser: Chooser;
  /** Called at every quiescent point with the state's key and the steps so far; false cuts the path. */
  visit(key: string, depth: number): boolean;
}

interface Move {
  label: string;
  step: Step;
  budgeted: boolean;
  apply(): void | Promise<void>;
}

/** Steps on one path before it is called a runaway (a loop the bounds did not stop). */
const MAX_STEPS = 400;
/** Macrotasks without activity before the agent is taken to wait on the world. */
const QUIET_ROUNDS = 2;
const MAX_ROUNDS = 10_000;

/** Real time a run that seems stuck gets before it is called a hang. */
const HANG_PATIENCE_MS = 200;

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

async function activityWithin(process: Process, ms: number): Promise<boolean> {
  const before = process.world.activity;
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    await new Promise<void>((resolve) => setTimeout(resolve, 1));
    if (process.world.activity !== before) return true;
  }
  return false;
}

export async function runPath(spec: Spec, hooks: PathHooks): Promise<PathRecord> {
  const session: Session = new Session(spec, {
    ...hooks,
    onEvent: (event, process) => {
      hooks.onEvent?.(event, process);
      if (!spec.reentrant || failure) return;
      // The agent isolates its subscribers: an error of the explorer's own is carried out of here.
      try {
        landInSubscriber(event);
      } catch (error) {
        failure = error;
      }
    },
  });
  let failure: unknown = null;

  // Re-entrant interruptions: the chooser may land one inside the subscriber of any event.
  const landInSubscriber = (event: AgentEvent): void => {
    if (!session.running || session.budget === 0) return;
    const kinds = (['steer', 'followUp', 'abort'] as const).filter((kind) => spec.interruptions.has(kind));
    if (kinds.length === 0) return;
    const where = `${event.type} #${session.log.filter((logged) => logged.type === event.type).length}`;
    const labels = ['-', ...kinds.map((kind) => `${kind} at ${where}`)];
    const choice = hooks.chooser.choose(labels);
    if (choice === 0) return;
    const kind = kinds[choice - 1]!;
    const label = labels[choice]!;
    const during = `inside the subscriber of ${where}`;
    session.budget--;
    if (kind === 'abort') {
      session.recordStep({ kind, label, during });
      session.abort(false);
    } else {
      session.recordStep({ kind, label, text: session.send(kind).text, during });
    }
  };

  const movesOf = (process: Process): Move[] => {
    const moves: Move[] = [];
    let toolOffered = false;
    for (const task of process.world.tasks()) {
      if (task.kind === 'tool' && spec.toolOrder === 'callOrder') {
        if (toolOffered) continue;
        toolOffered = true;
      }
      for (const choice of task.choices) {
        if (choice.budgeted && session.budget === 0) continue;
        moves.push(taskMove(task, choice.name, choice.budgeted, spec.approvals));
      }
    }
    if (process.store && spec.approvals.size > 0) {
      for (const pending of process.agent.pendingApprovals()) {
        for (const [name, decision] of spec.approvals) {
          const label = `${name} ${pending.toolCallId}`;
          const step: Step = {
            kind: 'approval',
            label,
            toolCallId: pending.toolCallId,
            toolName: pending.toolName,
            decision: name,
            value: decision,
          };
          moves.push({
            label,
            budgeted: false,
            step,
            apply: () => session.answer(pending, decision),
          });
        }
      }
    }
    const delay = process.clock.pendingDelays()[0];
    if (delay !== undefined) {
      const label = `clock +${delay}ms`;
      moves.push({
        label,
        budgeted: false,
        step: { kind: 'clock', label, toMs: process.clock.now() + delay },
        apply: () => void process.clock.fireNext(),
      });
    }
    if (session.budget === 0 || !session.running) return moves;
    const during = session.during();
    for (const kind of ['steer', 'followUp'] as const) {
      if (!spec.interruptions.has(kind)) continue;
      moves.push({
        label: kind,
        budgeted: true,
        step: { kind, label: kind, text: session.nextText(kind), during },
        apply: () => void session.send(kind),
      });
    }
    if (spec.interruptions.has('abort')) {
      moves.push({
        label: 'abort',
        budgeted: true,
        step: { kind: 'abort', label: 'abort', during },
        apply: () => session.abort(true),
      });
    }
    if (spec.interruptions.has('crash') && process.store) {
      moves.push({
        label: 'crash',
        budgeted: true,
        step: { kind: 'crash', label: 'crash', during },
        apply: () => session.crash(),
      });
    }
    return moves;
  };

  /** The state: the log so far (and approval answers), what the world waits on, the timers, the budget, the receipts. */
  const stateKey = (process: Process): string => {
    const tasks = process.world
      .tasks()
      .map((task) => `${task.kind}:${task.subject}:${task.choices.map((c) => c.name).join('|')}`);
    const approvals = process.store ? process.agent.pendingApprovals().map((a) => a.toolCallId) : [];
    const receipts = session.sent.map((m) => m.receipt?.status ?? null);
    const rest = [
      tasks,
      approvals,
      process.clock.pendingDelays(),
      session.budget,
      session.counts,
      process.world.modelCalls,
      process.index,
      receipts,
    ];
    return session.hash.copy().update(JSON.stringify(rest)).digest();
  };

  await session.start();
  for (;;) {
    const process = session.current;
    const settled = await quiesce(process);
    if (failure) {
      await session.finish(null, true);
      throw failure;
    }
    if (!settled)
      return session.finish(`the agent kept working for ${MAX_ROUNDS} macrotasks without waiting on the world`);
    if (!session.running) return session.finish(null);
    // Abort reaches every await: an abort settles the run within a macrotask, whatever it waited on.
    if (session.steps.at(-1)?.kind === 'abort')
      return session.finish(`abort: the run did not end after agent.abort() (${session.during()})`);
    if (session.steps.length >= MAX_STEPS) return session.finish(`runaway: more than ${MAX_STEPS} steps on one path`);
    const moves = movesOf(process);
    if (moves.length === 0) {
      // Real tool bodies may still be working outside the world (macrotask chains): give them time first.
      if (await activityWithin(process, HANG_PATIENCE_MS)) continue;
      return session.finish('hang: the run neither ended nor waits on the model, a tool, an approval or a timer');
    }
    if (!hooks.visit(stateKey(process), session.steps.length)) return session.finish(null, true);
    const move = moves[hooks.chooser.choose(moves.map((m) => m.label))]!;
    if (move.budgeted) session.budget--;
    session.recordStep(move.step);
    await move.apply();
  }
}

/** Lets the agent run until it waits on the world: no activity for a few macrotasks in a row. */
async function quiesce(process: Process): Promise<boolean> {
  let last = process.world.activity;
  let quiet = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    await macrotask();
    if (process.world.activity === last) {
      if (++quiet >= QUIET_ROUNDS) return true;
    } else {
      last = process.world.activity;
      quiet = 0;
    }
  }
  return false;
}

function taskMove(task: Task, choice: string, budgeted: boolean, approvals: Spec['approvals']): Move {
  const step = stepOf(task, choice, approvals);
  return { label: step.label, budgeted, step, apply: () => task.release(choice) };
}

/** The step of releasing a task with one of its choices; its label is what a replay names. */
export function stepOf(task: Task, choice: string, approvals: Spec['approvals']): Step {
  const label = task.kind === 'model' ? choice : `${choice} ${task.subject}`;
  switch (task.kind) {
    case 'model':
      return choice === 'modelError'
        ? { kind: 'modelError', label, modelCall: Number(task.subject) }
        : { kind: 'reply', label, modelCall: Number(task.subject), reply: choice.slice('reply '.length) };
    case 'tool':
      return {
        kind: 'tool',
        label,
        toolCallId: task.subject,
        toolName: task.toolName,
        outcome: choice === 'error' ? 'error' : 'ok',
      };
    case 'approval':
      return {
        kind: 'approval',
        label,
        toolCallId: task.subject,
        toolName: task.toolName,
        decision: choice,
        value: approvals.get(choice)!,
      };
  }
}
