import { AgentError } from '../../domain/errors.js';
import { createTraceRecorder } from '../../trace/recorder.js';
import { viewerHtml } from '../../trace/viewer-html.js';
import { specOf } from './explore.js';
import { runPath } from './path.js';
import { replayChooser } from './search.js';
import type { TrackedClock } from '../tracked-clock.js';
import type { Violation } from './types.js';

/**
 * Replays a counterexample with the trace recorder attached and writes it for the trace viewer:
 * JSONL (open it with the viewer's "Open trace…"), or with a `.html` name the self-contained viewer
 * page with the trace embedded. Timestamps are the simulated clock's. Node only (it writes a file).
 */
export async function writeTrace(violation: Violation, file: string): Promise<{ path: string; entries: number }> {
  const spec = specOf(violation);
  if (!spec)
    throw new AgentError(
      'InvalidInput',
      'writeTrace: the violation must come from exploreAgent or assertAgent of this process.',
    );
  let clock: TrackedClock | null = null;
  const recorder = createTraceRecorder({ now: () => clock?.now() ?? 0 });
  const labels = violation.path.map((step) => step.label);
  const record = await runPath(spec, {
    chooser: replayChooser(labels),
    visit: () => true,
    inspect: recorder.inspect,
    onClock: (next) => {
      clock = next;
    },
    onEvent: (event) => recorder.events.next?.(event),
  });
  const same =
    JSON.stringify(record.log.map(({ runId: _r, ...rest }) => rest)) ===
    JSON.stringify(violation.log.map(({ runId: _r, ...rest }) => rest));
  if (!same) throw new Error('writeTrace: the path did not replay to the same log: the agent is not deterministic.');
  const jsonl = recorder.toJSONL();
  const { writeFile } = await import('node:fs/promises');
  const html = /\.html?$/i.test(file);
  const title = `counterexample: ${violation.problems[0] ?? ''}`.slice(0, 200);
  await writeFile(file, html ? viewerHtml({ trace: jsonl, traceName: violation.replay, title }) : jsonl, 'utf8');
  return { path: file, entries: recorder.entryCount };
}
