/**
 * Work that must begin after the step that decided it: a tool call's start, an approval request.
 * XState runs each step to completion, so a steer or an abort accepted during a step (from an event
 * subscriber) reaches the turn only after it. Waiting for the step to end lets the turn see it
 * first: calls it holds or cancels never start. One microtask serves everything a step began.
 *
 * Two phases: first every start (the calls of a parallel batch are all announced before any of
 * them runs), then the tools (with a store, once every step so far is written: a call's start is
 * durable before its tool runs, so a crash never re-runs a 'never' tool).
 */
export class StepBoundary {
  private starts: Array<() => void> = [];
  private runs: Array<() => void> = [];
  private starting = false;

  /** `settled`: while an async store writes, the promise of every step so far being written. */
  constructor(private readonly settled: () => Promise<void> | null) {}

  /** Calls `start` once the current step is over. */
  afterStep(start: () => void): void {
    this.starts.push(start);
    if (this.starts.length === 1 && !this.starting) queueMicrotask(this.drain);
  }

  /** Runs `job` after the starts of this boundary (at once outside one). */
  thenRun(job: () => void): void {
    if (this.starting) this.runs.push(job);
    else job();
  }

  private readonly drain = () => {
    // With an async store, a call is announced only once every step before it is durable.
    const pending = this.settled();
    if (pending) void pending.then(this.startAll);
    else this.startAll();
  };

  private readonly startAll = () => {
    this.starting = true;
    try {
      while (this.starts.length > 0) {
        const starts = this.starts;
        this.starts = [];
        for (const start of starts) start();
      }
    } finally {
      this.starting = false;
    }
    const runs = this.runs;
    this.runs = [];
    if (runs.length === 0) return;
    const pending = this.settled();
    if (pending) void pending.then(() => runAll(runs));
    else runAll(runs);
  };
}

function runAll(jobs: Array<() => void>): void {
  for (const job of jobs) job();
}
