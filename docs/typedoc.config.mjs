// `npm run docs`: the API reference, generated from the types of every entry point of package.json, into
// docs/api/ (not committed; paths here are relative to this file). Any warning fails the build: a broken {@link}, an export of the root entry point
// without documentation.
import { readFileSync } from 'node:fs';

const { exports } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const entryPoints = Object.keys(exports).map((subpath) =>
  subpath === '.' ? '../src/index.ts' : `../src/${subpath.slice('./'.length)}.ts`,
);

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  entryPoints,
  tsconfig: '../src/tsconfig.build.json',
  out: 'api',
  name: 'agentchart',
  readme: 'none',
  // No links to a hosted repository: a clone may have no remote, or one TypeDoc cannot turn into URLs.
  disableSources: true,
  excludePrivate: true,
  excludeInternal: true,
  treatWarningsAsErrors: true,
  // Broken links fail; what the root entry point leaves undocumented fails through the plugin below. Types a
  // public type is built from (zod schemas behind `z.infer`, verdict variants) are shown by name, not exported.
  validation: { notExported: false, notDocumented: false, invalidLink: true, invalidPath: true, rewrittenLink: true },
  plugin: ['./tools/typedoc-root-documented.mjs'],
};
