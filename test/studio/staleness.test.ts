import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildStudioFiles, buildStudioScript } from '../../visualizations/studio-build.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('the studio page files', () => {
  it('are exactly what `npm run viz` generates (the page script, a module of the package)', async () => {
    const stale: string[] = [];
    for (const file of await buildStudioFiles()) {
      const onDisk = await readFile(`${root}${file.path}`, 'utf8').catch(() => null);
      if (onDisk !== file.content) stale.push(onDisk === null ? `${file.path} (missing)` : file.path);
    }
    expect(stale, 'run `npm run viz` and commit the result').toEqual([]);
  });

  it('join into one script with no imports left, which parses', async () => {
    const script = await buildStudioScript();
    expect(script.endsWith('startStudioPage();\n})();\n')).toBe(true);
    expect(script).not.toMatch(/^\s*(import|export)\s/m);
    expect(() => new Function(script)).not.toThrow();
  });
});
