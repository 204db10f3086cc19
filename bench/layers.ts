import { sourceOf, type CallFrame } from './cpu-profile.js';

/**
 * agentchart's runtime layers, for "where the time goes": each sample (CPU) or allocation (heap)
 * is charged to the innermost frame on its stack that belongs to a layer. Engine built-ins are
 * charged to their caller; rxjs to event emission (it is the subscribers' fan-out); zod is a layer
 * of its own (what validation costs, wherever it is asked for), and so is the store.
 */

/** A layer, or null: charge the frame's caller. */
export function runtimeLayerOf(frame: CallFrame): string | null {
  const { functionName } = frame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)' || functionName === '(root)') return 'engine (no JS frame)';
  if (functionName === '(idle)') return '(idle)';
  const source = sourceOf(frame);
  if (source === 'xstate') return 'XState interpreter';
  if (source === 'zod') return 'zod (schema validation)';
  if (source === 'rxjs') return 'event emission';
  if (source === 'node/V8 built-ins') return frame.url === 'node:sqlite' ? 'store (SQLite, step records)' : null;
  if (source === 'machines/tool-call.machine.ts') return 'tool-call actor logic (machines/)';
  if (source.startsWith('machines/')) return 'chart guards, assigns, helpers (machines/)';
  const runtime = RUNTIME_FILES[source];
  if (runtime) return runtime === 'run session' ? runSessionLayer(functionName) : runtime;
  if (source.startsWith('src/store/') || source === 'src/sqlite.ts') return 'store (SQLite, step records)';
  if (source === 'src/model/stream-events.ts') return 'model stream: event validation';
  if (source === 'src/model/accumulator.ts') return 'model stream: accumulator';
  if (source === 'src/tools/validate.ts' || source === 'src/tools/schema.ts') return 'tool arguments: validation';
  if (source.startsWith('src/tools/')) return 'tool effects (publish, commit, start, run)';
  if (source.startsWith('src/domain/'))
    return source === 'src/domain/history-view.ts' ? 'history views' : 'domain helpers';
  if (source.startsWith('src/testing/') || source.startsWith('bench/')) return 'scripted model, bench driver';
  if (source.startsWith('src/')) return 'other src/';
  if (source.startsWith('@mariozechner/')) return 'pi';
  if (source === 'ai' || source.startsWith('@ai-sdk/')) return 'AI SDK';
  if (source === 'typebox' || source.startsWith('@sinclair/')) return 'TypeBox';
  return 'other packages';
}

const RUNTIME_FILES: Record<string, string> = {
  'src/runtime/model-call.ts': 'model stream: reading the port',
  'src/runtime/timers.ts': 'timers, abort waits, fairness',
  'src/runtime/run-session.ts': 'run session',
  'src/runtime/event-stream.ts': 'event emission',
  'src/runtime/counter-ledger.ts': 'counter ledger',
  'src/runtime/persistence.ts': 'persistence checkpoints',
  'src/runtime/checkpoint.ts': 'persistence checkpoints',
  'src/runtime/step-machines.ts': 'persistence checkpoints',
  'src/runtime/history.ts': 'history views',
  'src/runtime/policy-slots.ts': 'policy slots',
  'src/runtime/policy-runner.ts': 'policy slots',
  'src/runtime/step-boundary.ts': 'step boundary',
  'src/runtime/isolation.ts': 'inspection hooks, isolation',
  'src/runtime/run-registry.ts': 'run registry (runAction, runOf)',
  'src/runtime/turn-effects.ts': 'tool effects (publish, commit, start, run)',
  'src/runtime/turn-end.ts': 'tool effects (publish, commit, start, run)',
  'src/runtime/tool-call-effects.ts': 'tool effects (publish, commit, start, run)',
  'src/runtime/tool-phases.ts': 'tool effects (publish, commit, start, run)',
  'src/runtime/effect-actors.ts': 'tool effects (publish, commit, start, run)',
  'src/runtime/run-launcher.ts': 'run start and end, master effects',
  'src/runtime/master-effects.ts': 'run start and end, master effects',
  'src/runtime/agent.ts': 'run start and end, master effects',
};

/** run-session.ts holds the emitter and the live-delta path; the rest of it is the run's bookkeeping. */
function runSessionLayer(functionName: string): string {
  if (functionName === 'emit' || functionName === 'persist' || functionName === 'streamLiveDelta')
    return 'event emission';
  if (functionName === 'commit') return 'history views';
  return 'run start and end, master effects';
}

/** A stack, leaf first: the layer it is charged to ('engine (no JS frame)' when no frame has one). */
export function chargedLayer(stack: Iterable<CallFrame>): string {
  for (const frame of stack) {
    const layer = runtimeLayerOf(frame);
    if (layer !== null) return layer;
  }
  return 'engine (no JS frame)';
}

/** The layers in the order tables show them (the runtime's path through a turn, then the rest). */
export const LAYER_ORDER = [
  'XState interpreter',
  'chart guards, assigns, helpers (machines/)',
  'tool-call actor logic (machines/)',
  'model stream: reading the port',
  'model stream: event validation',
  'model stream: accumulator',
  'event emission',
  'counter ledger',
  'persistence checkpoints',
  'history views',
  'policy slots',
  'step boundary',
  'inspection hooks, isolation',
  'run registry (runAction, runOf)',
  'tool effects (publish, commit, start, run)',
  'tool arguments: validation',
  'timers, abort waits, fairness',
  'run start and end, master effects',
  'domain helpers',
  'other src/',
  'scripted model, bench driver',
  'pi',
  'AI SDK',
  'TypeBox',
  'other packages',
  'zod (schema validation)',
  'store (SQLite, step records)',
  'GC',
  'engine (no JS frame)',
];

/** The coarse groups a target's profile is read by first: the engine, our charts, the runtime, events, store, zod, GC. */
export const GROUP_ORDER = [
  'XState interpreter',
  'our charts: actions, guards (machines/)',
  'runtime (src/)',
  'events and subscribers',
  'store',
  'zod',
  'GC',
  'peer library',
  'workload (scripted model, driver)',
  'engine, other',
] as const;

export function groupOf(layer: string): (typeof GROUP_ORDER)[number] {
  if (layer === 'XState interpreter') return 'XState interpreter';
  if (layer.endsWith('(machines/)')) return 'our charts: actions, guards (machines/)';
  if (layer === 'event emission') return 'events and subscribers';
  if (layer.startsWith('store') || layer === 'persistence checkpoints') return 'store';
  if (layer.startsWith('zod')) return 'zod';
  if (layer === 'GC') return 'GC';
  if (layer === 'pi' || layer === 'AI SDK' || layer === 'TypeBox') return 'peer library';
  if (layer === 'scripted model, bench driver') return 'workload (scripted model, driver)';
  if (layer === 'engine (no JS frame)' || layer === 'other packages') return 'engine, other';
  return 'runtime (src/)';
}
