import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REGION_PAGES, withRegions } from '../../docs/tools/regions.js';
import { FailureCodeSchema, RunErrorCodeSchema } from '../../src/domain/errors.js';

/** The generated parts of docs/ (error codes from the enums, bench figures from bench/results.json). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the generated regions of docs/', () => {
  it.each(REGION_PAGES)('%s is what `npm run docs:regions` writes', (page) => {
    const markdown = readFileSync(`${ROOT}${page}`, 'utf8');
    expect(markdown).toMatch(/<!-- generated:[\w-]+ -->\n\S/);
    expect(withRegions(page, markdown) === markdown, `run \`npm run docs:regions\` and commit ${page}`).toBe(true);
  });

  it('list every error code a run can end with and every failureCodes key (AgentError codes: the typecheck)', () => {
    const errors = readFileSync(`${ROOT}docs/errors.md`, 'utf8');
    for (const code of [...RunErrorCodeSchema.options, ...FailureCodeSchema.options])
      expect(errors, code).toContain(`| \`${code}\` |`);
  });
});
