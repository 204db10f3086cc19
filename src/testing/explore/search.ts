import { AgentError } from '../../domain/errors.js';
import type { Chooser } from './path.js';

/**
 * Depth-first search over the choices of a deterministic program that cannot be forked: every
 * path is a fresh execution that replays a prefix of choices, then takes the first alternative at
 * each new choice point while recording how many there were. Backtracking bumps the deepest choice
 * that has an untried alternative. The explored tree is the program's, its states are pruned by
 * the caller.
 */
export class DepthFirst {
  private prefix: number[] = [];
  /** The moves offered at each choice of the prefix when it was first met: a replay must meet the same. */
  private prefixLabels: Array<readonly string[]> = [];
  private trail: Array<{ chosen: number; count: number; labels: readonly string[] }> = [];
  private done = false;

  /** The chooser for the next execution, or null when every path was taken. */
  next(): Chooser | null {
    if (this.done) return null;
    this.trail = [];
    const prefix = this.prefix;
    return {
      choose: (labels) => {
        const depth = this.trail.length;
        const chosen = depth < prefix.length ? prefix[depth]! : 0;
        const before = this.prefixLabels[depth];
        if (depth < prefix.length && before && before.join('\n') !== labels.join('\n'))
          throw nondeterministic(depth, before, labels);
        this.trail.push({ chosen, count: labels.length, labels });
        return chosen;
      },
    };
  }

  /** True while the execution is still replaying its prefix (states met there were explored before). */
  replaying(): boolean {
    return this.trail.length < this.prefix.length;
  }

  /** After an execution: the prefix of the next one (the deepest choice with an alternative left, bumped). */
  backtrack(): void {
    const trail = this.trail;
    while (trail.length > 0 && trail[trail.length - 1]!.chosen + 1 >= trail[trail.length - 1]!.count) trail.pop();
    if (trail.length === 0) {
      this.done = true;
      return;
    }
    this.prefix = trail.map((entry) => entry.chosen);
    this.prefixLabels = trail.map((entry) => entry.labels);
    this.prefix[this.prefix.length - 1]! += 1;
  }
}

/** Follows a recorded path by its labels; at a re-entrant point not named in it, lands nothing ('-'). */
export function replayChooser(labels: readonly string[]): Chooser & { remaining(): string[] } {
  let position = 0;
  return {
    choose(options) {
      const wanted = labels[position];
      const index = wanted === undefined ? -1 : options.indexOf(wanted);
      if (index >= 0) {
        position++;
        return index;
      }
      if (options[0] === '-') return 0;
      if (wanted === undefined) return 0;
      throw new AgentError(
        'InvalidInput',
        `exploreAgent: the path does not replay: step ${position + 1} is "${wanted}", but the moves here are ${options.map((o) => `"${o}"`).join(', ')}.`,
      );
    },
    remaining: () => labels.slice(position),
  };
}

function nondeterministic(depth: number, before: readonly string[], now: readonly string[]): Error {
  return new Error(
    `exploreAgent: the agent is not deterministic: at choice ${depth + 1} of a replayed path the moves were ` +
      `[${before.join(', ')}] the first time and are [${now.join(', ')}] now. Tools, policies and approval handlers ` +
      'must not depend on time, randomness or state kept between paths (pass a function that makes fresh options).',
  );
}
