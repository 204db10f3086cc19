import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { pages, regionsOf, ROOT } from './figures.js';

/**
 * The check at the end of a run that measured a figure: with AGENTCHART_FIGURES_DIR set (by
 * `npm run figures`) the value is recorded there for the pages; otherwise every region of that name
 * must already say it, and at least one page must show it. Mutation runs leave figures unchecked
 * (AGENTCHART_FIGURES_UNCHECKED): a mutant must be killed by a behaviour, not by a count in the docs.
 */
export function expectFigure(name: string, text: string): void {
  if (process.env.AGENTCHART_FIGURES_UNCHECKED === '1') return;
  const dir = process.env.AGENTCHART_FIGURES_DIR;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.txt`), text);
    return;
  }
  const shown = pages().flatMap((page) =>
    regionsOf(readFileSync(join(ROOT, page), 'utf8'))
      .filter((region) => region.name === name)
      .map((region) => ({ page, content: region.content })),
  );
  expect(shown.length, `no page shows the figure "${name}"`).toBeGreaterThan(0);
  for (const { page, content } of shown) {
    expect(content, `${page}: the figure "${name}" is stale; run npm run figures`).toBe(text);
  }
}
