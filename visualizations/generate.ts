import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { embedDiagrams } from './readme-embed.js';
import { renderVisualizations } from './render.js';

// `npm run viz`: regenerates every diagram next to this script, and the ones README.md embeds.
const directory = fileURLToPath(new URL('.', import.meta.url));
const files = await renderVisualizations();
for (const file of files) {
  await writeFile(`${directory}${file.name}`, file.content);
  console.log(`visualizations/${file.name}`);
}
const readmePath = fileURLToPath(new URL('../README.md', import.meta.url));
await writeFile(readmePath, embedDiagrams(await readFile(readmePath, 'utf8'), files));
console.log('README.md (embedded diagrams)');
