import type { TurnInput, TurnOutput } from '../../machines/turn.types.js';
import { toolCallsOf } from '../../src/domain/messages.js';
import { canonicalJson } from './harness/canonical.js';
import { explore } from './harness/explore.js';
import { PROGRESS_TOOL, REPORT_TOOL } from './turn-fixtures.js';
import { provideTurn, turnEnvironment, type TurnConfig } from './turn-model.js';

/**
 * The outcomes a real turn reaches for one input, found by exploring the turn machine under its
 * environment. The master checks use them as the turn's done events: composition, not a stub.
 */

export interface TurnOutcome {
  /** A short name for the outcome's shape, used as the move's label. */
  name: string;
  output: TurnOutput;
}

export interface TurnOutcomes {
  /** Reached when the master sent the turn nothing. */
  plain: TurnOutcome[];
  /** Reached only after STEERING_ARRIVED (and no ABORT). */
  afterSteering: TurnOutcome[];
  /** Reached after ABORT. */
  afterAbort: TurnOutcome[];
}

const cache = new Map<string, TurnOutcomes>();

/**
 * Outcomes are told apart by what the master (and its report-mode guards) can read: kind,
 * detail, end reason, error class, whether the reply asked for tools, which tools ran, injections.
 * One representative output is kept per shape.
 */
function shapeOf(output: TurnOutput): string {
  const ran = output.toolResults.filter((result) => output.startedCallIds.includes(result.toolCallId));
  return [
    output.kind,
    output.detail ?? '',
    output.turnEndReason ?? 'open',
    output.error ? `${output.error.kind}${output.error.retryable ? '!' : ''}` : '',
    output.assistant && toolCallsOf(output.assistant).length > 0 ? 'calls' : '',
    ran.some((result) => result.toolName === REPORT_TOOL && !result.isError) ? 'report' : '',
    ran.some((result) => result.toolName === PROGRESS_TOOL) ? 'progress' : '',
    ran.some((result) => result.toolName !== REPORT_TOOL && result.toolName !== PROGRESS_TOOL) ? 'work' : '',
    output.injected.length > 0 ? 'injected' : '',
  ]
    .filter((part) => part !== '')
    .join('.');
}

export function reachableTurnOutcomes(config: TurnConfig, input: TurnInput): TurnOutcomes {
  const key = canonicalJson([
    config,
    input.features,
    input.attempt,
    input.retryAvailable,
    input.fallbackAvailable,
    input.overflowRecoveryAvailable,
    input.steeringArrived,
  ]);
  const known = cache.get(key);
  if (known) return known;
  const graph = explore(provideTurn(), turnEnvironment(config), { input, limit: 20_000 });
  const outcomes: TurnOutcomes = { plain: [], afterSteering: [], afterAbort: [] };
  const seen = { plain: new Set<string>(), afterSteering: new Set<string>(), afterAbort: new Set<string>() };
  for (const node of graph.nodes.values()) {
    if (node.walk.status !== 'done') continue;
    const output = node.walk.snapshot.output as TurnOutput;
    const { aborts, steerings } = node.walk.env;
    // The runtime marks a reply aborted only once the run's signal fired, which the master learns as
    // ABORT (the closing attempt, which the master runs after an abort, is aborted by design).
    if (aborts === 0 && output.kind === 'aborted' && input.attempt !== 'closing') continue;
    const kind = aborts > 0 ? 'afterAbort' : steerings > 0 ? 'afterSteering' : 'plain';
    const name = shapeOf(output);
    if (seen[kind].has(name) || (kind === 'afterSteering' && seen.plain.has(name))) continue;
    seen[kind].add(name);
    outcomes[kind].push({ name, output });
  }
  // A shape first met after steering may also be reachable without it: keep it in `plain` only.
  outcomes.afterSteering = outcomes.afterSteering.filter((outcome) => !seen.plain.has(outcome.name));
  cache.set(key, outcomes);
  return outcomes;
}
