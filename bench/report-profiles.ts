import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RoundTarget } from './report-targets.js';

/**
 * bench/where-time-goes.json, which bench/where-time-goes.ts writes beside where-time-goes.md: one
 * profile per speed target (a one-line summary and the next step), for results.md's missed targets.
 */
export interface ProfileIndex {
  /** The commit the profiles were taken on. */
  commit: string;
  generatedAt: string;
  seconds: number;
  /** The 1-minute load average during the profiling, min–max. */
  load: string;
  sections: { id: string; title: string; summary: string; nextStep: string }[];
}

export function readProfiles(): ProfileIndex | null {
  const file = fileURLToPath(new URL('./where-time-goes.json', import.meta.url));
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ProfileIndex) : null;
}

/**
 * For each missed target (wall clock or CPU), the profile of its workload: where the time goes and
 * the next step, linked to its section of where-time-goes.md — or what to run when there is none.
 */
export function missedTargetProfiles(targets: RoundTarget[], commit: string, profiles: ProfileIndex | null): string[] {
  const missed = targets.filter((t) => t.met === false || t.metOnCpu === false);
  if (missed.length === 0) return [];
  const head = ['### Missed targets: where the time goes, and the next step', ''];
  if (!profiles) {
    return [
      ...head,
      "No profiles yet: `npm run bench:where` profiles every target's workload into bench/where-time-goes.md and renders this file again with them.",
      '',
    ];
  }
  const base = commit.replace(/\+uncommitted$/, '');
  const same = profiles.commit === base;
  const byId = new Map(profiles.sections.map((section) => [section.id, section]));
  return [
    ...head,
    `From bench/where-time-goes.md (\`npm run bench:where\`), profiled on commit ${profiles.commit}` +
      `${same ? ', the commit of this run' : ` — **not this run's commit (${commit})**: run it again on this one`}` +
      ` (${profiles.generatedAt}, ${profiles.seconds} s per profile, load ${profiles.load}). CPU µs under a profiler's process, not this run's figures; the shares and ratios are what to read.`,
    '',
    ...missed.flatMap((t) => {
      const section = t.profile ? byId.get(t.profile) : undefined;
      if (!section) return [`- **${t.target}**: no profile of its workload.`];
      return [
        `- **${t.target}** — [profile](where-time-goes.md#${section.id}): ${section.summary}.`,
        `  Next step: ${section.nextStep}`,
      ];
    }),
    '',
  ];
}
