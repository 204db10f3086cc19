import type { InspectionEvent, Observer } from 'xstate';
import { isThenable } from './timers.js';

/** Receives what user callbacks threw (subscribers, the inspection observer). */
export type ErrorReporter = (error: unknown) => void;

const defaultReporter: ErrorReporter = (error) => console.error('agentchart: an event subscriber threw:', error);

/**
 * The user's `onSubscriberError`, made safe: a throw or a rejected promise from it is dropped (it
 * has nowhere left to go), so it never crashes the host (a subscriber's failure is its own).
 */
export function safeReporter(onSubscriberError: ErrorReporter | undefined): ErrorReporter {
  const report = onSubscriberError ?? defaultReporter;
  return (error) => {
    try {
      const returned: unknown = report(error);
      if (isThenable(returned)) void Promise.resolve(returned).then(undefined, () => {});
    } catch {
      // The error handler itself failed: nothing more can be done without crashing the host.
    }
  };
}

/** Calls a user callback; a throw or a returned promise that rejects goes to `report`. */
export function callIsolated<A extends unknown[]>(
  callback: ((...args: A) => unknown) | undefined,
  args: A,
  report: ErrorReporter,
): void {
  if (!callback) return;
  try {
    const returned: unknown = callback(...args);
    if (isThenable(returned)) void Promise.resolve(returned).then(undefined, report);
  } catch (error) {
    report(error);
  }
}

/** `callIsolated` for a callback of one argument, on the paths that call it for every event. */
export function callIsolated1<A>(callback: (arg: A) => unknown, arg: A, report: ErrorReporter): void {
  try {
    const returned: unknown = callback(arg);
    if (isThenable(returned)) void Promise.resolve(returned).then(undefined, report);
  } catch (error) {
    report(error);
  }
}

/** The user's inspection observer, isolated like a subscriber: a throw inside it never breaks the run. */
export function isolatedInspector(
  inspect: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined,
  report: ErrorReporter,
): ((event: InspectionEvent) => void) | null {
  if (!inspect) return null;
  if (typeof inspect === 'function') return (event) => callIsolated1(inspect, event, report);
  // Bound once, not per event: XState calls the inspector many times per turn.
  let next: ((event: InspectionEvent) => void) | undefined;
  try {
    next = inspect.next?.bind(inspect);
  } catch (error) {
    // A hostile observer whose `next` cannot be read: reported, and nothing is inspected.
    report(error);
  }
  return next ? (event) => callIsolated1(next, event, report) : () => {};
}
