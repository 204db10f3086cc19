import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CHARTS_PAGE, embedDiagrams } from './page-embed.js';
import { renderVisualizations } from './render.js';

// `npm run viz`: regenerates every diagram next to this script, and the ones docs/charts.md embeds.
const directory = fileURLToPath(new URL('.', import.meta.url));
const files = await renderVisualizations();
for (const file of files) {
  await writeFile(`${directory}${file.name}`, file.content);
  console.log(`visualizations/${file.name}`);
}
const pagePath = fileURLToPath(new URL(`../${CHARTS_PAGE}`, import.meta.url));
await writeFile(pagePath, embedDiagrams(await readFile(pagePath, 'utf8'), files));
console.log(`${CHARTS_PAGE} (embedded diagrams)`);
