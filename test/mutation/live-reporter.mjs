// A Stryker reporter that writes each surviving or uncovered mutant as it is found (one JSON line), so they
// can be read while a long run goes on; the html and json reports come only at the end.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const FILE = process.env.MUTATION_LIVE_FILE ?? 'test/.build/mutation/live.jsonl';

class LiveReporter {
  static inject = [];
  onDryRunCompleted() {
    mkdirSync(dirname(FILE), { recursive: true });
    writeFileSync(FILE, '');
  }
  onMutantTested(result) {
    if (result.status !== 'Survived' && result.status !== 'NoCoverage') return;
    const { fileName, location, mutatorName, replacement, status, static: isStatic } = result;
    const line = `${fileName.replace(/^.*?(machines|src)\//, '$1/')}:${location.start.line}:${location.start.column}`;
    appendFileSync(FILE, JSON.stringify({ status, line, mutatorName, replacement, static: isStatic }) + '\n');
  }
}

export const strykerPlugins = [{ kind: 'Reporter', name: 'live', injectableClass: LiveReporter }];
