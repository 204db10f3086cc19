import type { GeneratedFile } from './render.js';

/** The diagrams README.md embeds (GitHub renders Mermaid), between `<!-- viz:NAME -->` markers. */
export const README_DIAGRAMS = ['turn', 'master'] as const;

/** README.md with each embedded diagram replaced by the freshly generated one. */
export function embedDiagrams(readme: string, files: readonly GeneratedFile[]): string {
  let updated = readme;
  for (const name of README_DIAGRAMS) {
    const mermaid = files.find((file) => file.name === `${name}.mmd`)?.content;
    if (mermaid === undefined) throw new Error(`no generated diagram ${name}.mmd to embed`);
    const open = `<!-- viz:${name} -->`;
    const close = `<!-- /viz:${name} -->`;
    const start = updated.indexOf(open);
    const end = updated.indexOf(close);
    if (start < 0 || end < start) throw new Error(`README.md lacks the markers ${open} … ${close}`);
    const block = `${open}\n\`\`\`mermaid\n${mermaid.trimEnd()}\n\`\`\`\n${close}`;
    updated = updated.slice(0, start) + block + updated.slice(end + close.length);
  }
  return updated;
}
