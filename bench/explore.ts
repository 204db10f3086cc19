import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { exploreBenchmark } from './explore-agent.js';
import { loadAverage } from './stats.js';

/**
 * `npm run bench:explore`: exploreAgent on the typical agent (5 tools, 2 policies, approval on one
 * tool) at the README's bounds: paths, states and paths per second → bench/explore-results.md.
 */
const load = loadAverage();
const rows = await exploreBenchmark();
const lines = [
  '# exploreAgent on the typical agent',
  '',
  `Node ${process.version}, load average ${load['1m']} / ${load['5m']} / ${load['15m']} before the run, then ${loadAverage()['1m']}.`,
  'Five tools (one behind an approval), two policies, six replies (one per tool and a final answer).',
  '',
  '| bounds | paths | states | pruned | seconds | CPU seconds | paths/s |',
  '|---|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.name} | ${r.paths} | ${r.states} | ${r.pruned} | ${r.seconds.toFixed(1)} | ${r.cpuSeconds.toFixed(1)} | ${r.pathsPerSecond} |`,
  ),
  '',
];
writeFileSync(fileURLToPath(new URL('explore-results.md', import.meta.url)), lines.join('\n'));
process.stdout.write(lines.join('\n'));
