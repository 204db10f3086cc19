import { checkObserved } from '../observed/check.js';
import type { PathRecord } from './session.js';
import type { Spec } from './spec.js';

/**
 * What every explored path must satisfy: what the shared checker of src/testing/observed checks
 * (the event-log invariants on the log and the history, runs that end, aborts that win and stop
 * work, messages delivered once or still queued, parity of every model request, counters that
 * agree with what the world saw), then the user's property. A path that got stuck reports that alone.
 */
export function pathProblems(spec: Spec, record: PathRecord): string[] {
  if (record.stuck) return [record.stuck];
  const problems = checkObserved(record.observed);
  if (spec.property) problems.push(...propertyProblems(spec, record));
  return withoutRunIds(problems, record);
}

/** Run ids are random: a counterexample names its runs `#1`, `#2`… so it prints the same every time. */
function withoutRunIds(problems: string[], record: PathRecord): string[] {
  const ids = [...new Set(record.log.map((event) => event.runId))];
  return problems.map((problem) => ids.reduce((text, id, index) => text.split(id).join(`#${index + 1}`), problem));
}

function propertyProblems(spec: Spec, record: PathRecord): string[] {
  try {
    const verdict = spec.property!(record.log, record.messages, { steps: record.steps, result: record.result });
    if (verdict === false) return ['property: violated'];
    if (typeof verdict === 'string') return [`property: ${verdict}`];
    return [];
  } catch (error) {
    return [`property: ${error instanceof Error ? error.message : String(error)}`];
  }
}
