import type { GeneratedFile } from './render.js';

/** The page that embeds the diagrams as Mermaid (GitHub renders it), between `<!-- viz:NAME -->` markers. */
export const CHARTS_PAGE = 'docs/charts.md';
export const EMBEDDED_DIAGRAMS = ['master', 'turn', 'tool-call'] as const;

/** The page with each embedded diagram replaced by the freshly generated one. */
export function embedDiagrams(page: string, files: readonly GeneratedFile[]): string {
  let updated = page;
  for (const name of EMBEDDED_DIAGRAMS) {
    const mermaid = files.find((file) => file.name === `${name}.mmd`)?.content;
    if (mermaid === undefined) throw new Error(`no generated diagram ${name}.mmd to embed`);
    const open = `<!-- viz:${name} -->`;
    const close = `<!-- /viz:${name} -->`;
    const start = updated.indexOf(open);
    const end = updated.indexOf(close);
    if (start < 0 || end < start) throw new Error(`${CHARTS_PAGE} lacks the markers ${open} … ${close}`);
    const block = `${open}\n\`\`\`mermaid\n${mermaid.trimEnd()}\n\`\`\`\n${close}`;
    updated = updated.slice(0, start) + block + updated.slice(end + close.length);
  }
  return updated;
}
