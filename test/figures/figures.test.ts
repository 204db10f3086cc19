import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectFigure } from './expect.js';
import { FIGURE_NAMES, pages, regionsOf, render, ROOT, withFigures, type PathTally } from './figures.js';
import { suiteFigures } from './sources.js';

describe('figures in the docs (npm run figures writes them)', () => {
  const regions = pages().flatMap((page) =>
    regionsOf(readFileSync(join(ROOT, page), 'utf8')).map((region) => ({ page, ...region })),
  );

  it('are regions of figures the script knows; each is shown (the mutation score where a report was made)', () => {
    expect(regions.filter((region) => !(FIGURE_NAMES as readonly string[]).includes(region.name))).toEqual([]);
    const shown = new Set(regions.map((region) => region.name));
    expect(FIGURE_NAMES.filter((name) => name !== 'mutation' && !shown.has(name))).toEqual([]);
  });

  it('sit inside a line: a line that begins with an HTML comment would end its paragraph', () => {
    const opening = pages().flatMap((page) =>
      readFileSync(join(ROOT, page), 'utf8')
        .split('\n')
        .flatMap((line, index) => (/^\s*<!-- figures:/.test(line) ? [`${page}:${index + 1}`] : [])),
    );
    expect(opening).toEqual([]);
  });

  it('the counts the test code fixes: interleavings in CI, sessions killed by the crash test', () => {
    for (const [name, text] of Object.entries(suiteFigures())) expectFigure(name, text);
  });

  it('are written in one way: regions replaced in place, numbers with separators', () => {
    const page =
      'a <!-- figures:interleavings -->1<!-- /figures:interleavings --> b <!-- figures:x -->y<!-- /figures:x -->';
    expect(withFigures(page, { interleavings: '3,800' })).toBe(
      'a <!-- figures:interleavings -->3,800<!-- /figures:interleavings --> b <!-- figures:x -->y<!-- /figures:x -->',
    );
    expect(render.paths({ configurations: 2, paths: 6508, states: 12345 } as PathTally)).toBe(
      '6,508 paths (12,345 states) in 2 configurations',
    );
  });
});
