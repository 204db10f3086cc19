import { readFileSync } from 'node:fs';

/** Reading V8 `.cpuprofile` files: self time per sample node, and where each frame's code lives. */

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export function loadProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

/** Sampled self time (µs) of each profile node. */
export function selfTimes(profile: CpuProfile): Map<number, number> {
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, index) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
  return selfUs;
}

/** Where a frame's code lives, coarse enough to read as a cost breakdown: a package or one of our files. */
export function sourceOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)' || functionName === '(program)') return functionName;
  if (url.includes('/node_modules/xstate/')) return 'xstate';
  if (url.includes('/node_modules/zod/')) return 'zod';
  if (url.includes('/node_modules/rxjs/')) return 'rxjs';
  // Our sources, or their build (dist/…/x.js, named as the source it was compiled from).
  const local = url.match(/\/(?:dist\/)?((?:machines|src|bench)\/[^/]+(?:\/[^/]+)?)\.(?:ts|js)$/);
  if (local && !url.includes('/node_modules/')) return `${local[1] as string}.ts`;
  if (url.startsWith('node:') || url === '') return 'node/V8 built-ins';
  const scoped = url.match(/.*\/node_modules\/(@[^/]+\/[^/]+)\//);
  if (scoped) return scoped[1] as string;
  if (url.includes('/node_modules/')) return url.replace(/.*\/node_modules\/([^/]+).*/, '$1');
  return url;
}

/**
 * The layer a frame belongs to, for comparing implementations: the statechart library, agentchart's
 * machines, runtime and other code, each peer library, the schema libraries, GC and the engine.
 */
export function layerOf(frame: CallFrame): string {
  const source = sourceOf(frame);
  if (source === 'xstate') return 'xstate';
  if (source.startsWith('machines/')) return 'agentchart machines/';
  if (source.startsWith('src/runtime/')) return 'agentchart src/runtime/';
  if (source === 'bench/hand-loop.ts') return 'hand loop';
  // Every contender's instant model: agentchart's scriptedModel and the peers' adapters in bench/.
  if (source.startsWith('src/testing/') || source.startsWith('bench/')) return 'scripted models, drivers';
  if (source.startsWith('src/')) return 'agentchart src/ (other)';
  if (source.startsWith('@mariozechner/')) return 'pi (agent core, pi-ai)';
  if (source === 'ai' || source.startsWith('@ai-sdk/')) return 'AI SDK (ai, @ai-sdk/*)';
  if (source === 'zod' || source === 'typebox') return `${source} (tool argument validation)`;
  if (source === 'GC' || source === '(program)' || source === '(idle)' || source === 'rxjs') return source;
  if (source === 'node/V8 built-ins') return source;
  return 'other packages';
}
