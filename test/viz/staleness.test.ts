import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHARTS_PAGE, embedDiagrams } from '../../visualizations/page-embed.js';
import { renderVisualizations } from '../../visualizations/render.js';

const directory = fileURLToPath(new URL('../../visualizations/', import.meta.url));

describe('visualizations/', () => {
  // Rendered once, in memory, exactly as `npm run viz` renders them.
  const rendering = renderVisualizations();

  it('the checked-in diagrams are exactly what `npm run viz` generates from the machines', async () => {
    const fresh = await rendering;
    const stale: string[] = [];
    for (const file of fresh) {
      const onDisk = await readFile(`${directory}${file.name}`, 'utf8').catch(() => null);
      if (onDisk !== file.content) stale.push(onDisk === null ? `${file.name} (missing)` : file.name);
    }
    expect(stale, 'run `npm run viz` and commit the result').toEqual([]);
  });

  it(`${CHARTS_PAGE} embeds the current diagrams`, async () => {
    const page = await readFile(fileURLToPath(new URL(`../../${CHARTS_PAGE}`, import.meta.url)), 'utf8');
    expect(embedDiagrams(page, await rendering) === page, `run \`npm run viz\` and commit ${CHARTS_PAGE}`).toBe(true);
  });

  it('holds no diagram of a machine that no longer exists', async () => {
    const expected = (await rendering).map((file) => file.name).filter((name) => name.endsWith('.mmd'));
    const present = (await readdir(directory)).filter((name) => name.endsWith('.mmd'));
    expect(present.sort()).toEqual(expected.sort());
  });
});
