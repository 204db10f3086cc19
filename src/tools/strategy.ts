import type { ToolCallBlock } from '../domain/messages.js';

/**
 * How a batch of prepared calls is dispatched. `partition` returns groups of indices into the
 * prepared calls; groups run one after another, the calls inside a group in parallel.
 */
export type ToolExecution =
  'parallel' | 'sequential' | { concurrency: number } | { partition(calls: readonly ToolCallBlock[]): number[][] };
